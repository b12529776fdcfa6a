"""The lanes (docs/architecture.md: Tests): tests/conftest.py puts each test in its lane from what it uses.

A real pytest collection of a few modules, selected as `make test-fast` selects: a test that runs a stage (through
the run_stage fixture), every test of a module listed as a training module, and a tests/grader test that takes a
fixture starting the grader or its sandbox are left out; the pure tests of the same modules stay in. And a real
pytest run of probes: in the fast lane, a test that starts the grader's command line, bubblewrap or a launcher's
child fails, naming what it started; marked for the sandbox lane, the same start runs.
"""

import subprocess
import sys

FAST = 'not (sandbox or pipeline or corpus or browser)'
MODULES = ["tests/mha/test_worked_example.py", "tests/mha/test_denormals.py", "tests/grader/test_template.py",
           "tests/grader/test_batch.py", "tests/grader/module/test_checks.py", "tests/grader/sandbox/test_session.py"]

PROBES = '''
import subprocess
import sys

import pytest

from grader.sandbox.launch import DirectLauncher
from grader.sandbox.limits import Limits


def test_starts_the_graders_command_line():
    subprocess.run([sys.executable, "-m", "grader", "--help"], capture_output=True, timeout=120)


def test_starts_bubblewrap():
    subprocess.run(["bwrap", "--version"], capture_output=True, timeout=60)


def test_starts_the_graders_command_line_through_a_shell():
    subprocess.run(["sh", "-c", f"exec {sys.executable} -m grader --help"], capture_output=True, timeout=120)


def test_starts_a_launchers_child():
    launcher = DirectLauncher()
    try:
        launcher.spawn(Limits())
    finally:
        launcher.close()


def test_starts_some_other_program():
    assert subprocess.run([sys.executable, "-c", "pass"], timeout=60).returncode == 0


@pytest.mark.sandbox
def test_in_the_sandbox_lane_starts_the_graders_command_line():
    assert subprocess.run([sys.executable, "-m", "grader", "--help"], capture_output=True, timeout=120).returncode == 0
'''


def test_the_fast_lane_is_every_test_that_starts_no_stage_sandbox_or_training_process(repo):
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                           "-m", FAST, *MODULES], capture_output=True, text=True, cwd=repo, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    fast = {line.split("::")[1].split("[")[0] for line in proc.stdout.splitlines() if "::" in line}
    assert fast == {"test_worked_example_matches_every_published_matrix", "test_worked_example_shape_is_the_courses",
                    "test_published_scores_are_the_scores_times_sqrt_dk",  # in-process, beside run_verify's tests
                    "test_the_templates_functions_take_the_references_parameters_and_defaults",  # in-process
                    # module/test_checks.py: its judgement's pure parts, beside the corpus it grades (run_grader, grade)
                    "test_the_corpus_has_fifteen_correct_layouts_and_names_every_module_mistake",
                    "test_a_leak_is_named_by_the_runs_it_shows_in",
                    "test_a_mask_not_cut_is_told_from_torchs_size_error_only_for_a_longer_mask",
                    "test_runs_move_beyond_float_noise_relative_to_their_size_and_matching_nans_do_not",
                    "test_the_first_leak_is_the_earliest_position_that_moved_when_only_later_inputs_changed",
                    "test_no_module_of_question_2_imports_another_modules_private_names"}


def test_a_fast_lane_test_that_starts_the_grader_or_its_sandbox_fails_naming_it(repo, tmp_path):
    (tmp_path / "test_probes.py").write_text(PROBES)
    # tests/conftest.py as a plugin: it sets the lanes and refuses the starts for tests outside tests/ too
    proc = subprocess.run([sys.executable, "-m", "pytest", "-vv", "-rfE", "-p", "no:cacheprovider",
                           "-p", "tests.conftest", "--rootdir", str(tmp_path), str(tmp_path / "test_probes.py")],
                          capture_output=True, text=True, cwd=repo, timeout=300)
    failed = {line.split("::")[1].split(" ")[0]: line for line in proc.stdout.splitlines() if line.startswith("FAILED")}
    assert set(failed) == {"test_starts_the_graders_command_line", "test_starts_bubblewrap",
                           "test_starts_the_graders_command_line_through_a_shell",
                           "test_starts_a_launchers_child"}, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert all("FastLaneStartedSandbox" in line for line in failed.values()), failed
    assert "4 failed, 2 passed" in proc.stdout, proc.stdout[-3000:]
