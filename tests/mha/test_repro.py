"""`make repro`'s estimate of what is left (mha.repro): its own times, the run logs', and a matrix's siblings'."""

from mha.repro import estimates, progress_line

STAGES = ["lab_train@heads_1-1337", "lab_train@heads_1-1338", "train_no_attention", "report"]


def test_a_matrix_stage_never_timed_is_estimated_from_its_siblings_and_nothing_else_is():
    known = estimates(STAGES, measured={"lab_train@reference-1337": 40.0, "report": 3.0},
                      logged={"lab_train@reference-1338": 50.0})
    assert known == {"lab_train@heads_1-1337": 45.0, "lab_train@heads_1-1338": 45.0, "report": 3.0}


def test_a_stage_s_own_time_wins_over_its_siblings_and_over_its_run_log():
    known = estimates(STAGES, measured={"lab_train@heads_1-1337": 30.0, "lab_train@reference-1337": 90.0},
                      logged={"lab_train@heads_1-1337": 99.0, "train_no_attention": 180.0})
    assert known["lab_train@heads_1-1337"] == 30.0 and known["train_no_attention"] == 180.0
    assert known["lab_train@heads_1-1338"] == 60.0  # the mean of the two siblings this checkout timed


def test_the_progress_line_counts_stages_and_says_what_is_not_timed():
    line = progress_line(2, 4, STAGES[1], STAGES[1:], {STAGES[1]: 45.0, "report": 3.0})
    assert line == ("repro: stage 2 of 4: lab_train@heads_1-1338 (about 45 s; about 48 s left, "
                    "plus 1 stage never timed here)")
