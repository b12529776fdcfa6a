"""Limits: the CPU limit derived from the budget, once, where the Limits are made."""

from dataclasses import replace

import pytest

from grader.sandbox.limits import Limits


@pytest.mark.parametrize(("budget", "cpu"), [(60.0, 60), (90, 90), (12.4, 12), (0.2, 1)])
def test_the_cpu_limit_is_the_budget_in_whole_seconds_and_at_least_one(budget, cpu):
    assert Limits(submission_seconds=budget).cpu_seconds == cpu


def test_the_default_cpu_limit_is_the_default_budget():
    assert Limits().cpu_seconds == Limits().submission_seconds == 60


def test_a_budget_shortened_by_the_reading_keeps_the_whole_budgets_cpu_limit():
    shortened = replace(Limits(submission_seconds=30), submission_seconds=29.3)  # what grade._graded does
    assert shortened.cpu_seconds == 30


def test_a_cpu_limit_given_is_kept():
    assert Limits(submission_seconds=60, cpu_seconds=50).cpu_seconds == 50
