"""The lanes (docs/architecture.md: Tests): tests/conftest.py puts each test in its lane from what it uses.

A real pytest collection of four modules, selected as `make test-fast` selects: a test that runs a stage (through
the run_stage fixture), every test of a module listed as a training module, and a tests/grader module that starts
the sandbox are left out; in-process tests stay in.
"""

import subprocess
import sys

FAST = 'not (sandbox or pipeline or corpus or browser)'
MODULES = ["tests/mha/test_worked_example.py", "tests/mha/test_denormals.py", "tests/grader/test_template.py",
           "tests/grader/test_batch.py"]


def test_the_fast_lane_is_every_test_that_starts_no_stage_sandbox_or_training_process(repo):
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                           "-m", FAST, *MODULES], capture_output=True, text=True, cwd=repo, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    fast = {line.split("::")[1].split("[")[0] for line in proc.stdout.splitlines() if "::" in line}
    assert fast == {"test_worked_example_matches_every_published_matrix", "test_worked_example_shape_is_the_courses",
                    "test_published_scores_are_the_scores_times_sqrt_dk",  # in-process, beside run_verify's tests
                    "test_the_templates_functions_take_the_references_parameters_and_defaults"}  # GRADER_IN_PROCESS
