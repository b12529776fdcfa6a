"""Points come from a TOML rubric with defaults; the worked example can never be worth more than half."""

import pytest

from grader import rubric
from grader.functions.cases import all_cases
from grader.functions.contract import FUNCTIONS


def test_default_rubric_covers_every_function_and_keeps_the_worked_example_at_most_half():
    r = rubric.load()
    assert {f for f, _, _ in r.tests()} == set(FUNCTIONS)
    assert 0 < r.worked_total <= r.total / 2


def test_a_rubric_file_overrides_only_what_it_names(tmp_path):
    path = tmp_path / "rubric.toml"
    path.write_text("[multi_head_attention]\nhidden = 10\n\n[project]\nworked = 0\n")
    r = rubric.load(path)
    default = rubric.load()
    assert r.points[("multi_head_attention", "hidden")] == 10
    assert ("project", "worked") not in r.points  # 0 drops the test
    assert r.points[("softmax", "large")] == default.points[("softmax", "large")]


@pytest.mark.parametrize(
    "body, message",
    [
        ("[softmax]\nworked = 100\n", "at most half"),
        ("[sofmax]\nworked = 1\n", "unknown function \\[sofmax\\]"),
        ("[softmax]\nvisible = 1\n", "visible is not a group"),
        ("[project]\nlarge = 1\n", "no large-score cases"),
        ("[softmax]\nhidden = -1\n", "must be a number >= 0"),
        ("[softmax\n", "not valid TOML"),
    ],
)
def test_a_bad_rubric_is_refused_with_a_message_naming_the_problem(tmp_path, body, message):
    path = tmp_path / "rubric.toml"
    path.write_text(body)
    with pytest.raises(ValueError, match=message):
        rubric.load(path)


def test_the_options_table_sets_the_mask_policy_and_refuses_unknown_values(tmp_path):
    assert rubric.load().policy.require_inf_mask is False
    path = tmp_path / "rubric.toml"
    path.write_text('[options]\nmask = "-inf"\n')
    assert rubric.load(path).policy.require_inf_mask is True
    path.write_text('[options]\nmask = "strict"\n')
    with pytest.raises(ValueError, match="mask = 'strict'; use one of 'finite', '-inf'"):
        rubric.load(path)
    path.write_text('[options]\nmasks = "-inf"\n')
    with pytest.raises(ValueError, match="masks is not an option"):
        rubric.load(path)


@pytest.mark.parametrize("function", FUNCTIONS)
def test_large_points_are_taken_exactly_for_the_functions_that_have_large_cases(tmp_path, function):
    """Which functions may score "large" comes from the cases themselves, whatever the seed."""
    has_large = {seed: any(c.function == function and c.group == "large" for c in all_cases(seed))
                 for seed in (0, 1, 7)}
    assert len(set(has_large.values())) == 1, has_large
    path = tmp_path / "rubric.toml"
    path.write_text(f"[{function}]\nlarge = 1\n")
    if has_large[0]:
        assert rubric.load(path).points[(function, "large")] == 1
    else:
        with pytest.raises(ValueError, match="no large-score cases"):
            rubric.load(path)
