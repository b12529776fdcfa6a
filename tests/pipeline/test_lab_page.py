"""The lab page (stage lab_report) from its fixtures: the numbers in (each run's mean and spread over its seeds),
the paragraphs chosen from them against the measured seed-to-seed noise, both languages, offline, deterministic;
and the stage's command line refusing a missing run file in one line."""

import filecmp
import importlib.util
import json
import math
import re
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import yaml

from mha.lab.page.inputs import load_lab
from mha.lab.page.render import render_lab_page
from mha.report.page import LAB_PAGE, REPORT_PAGE
from mha.schema import ReportConfig

REPO = Path(__file__).resolve().parents[2]
TEMPLATES = REPO / "pipeline" / "templates"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
LAB = FIXTURES / "lab"
_spec = importlib.util.spec_from_file_location("lab_fixtures", FIXTURES / "make_lab_fixtures.py")
lab_fixtures = importlib.util.module_from_spec(_spec)
sys.modules["lab_fixtures"] = lab_fixtures  # its dataclasses look their module up
_spec.loader.exec_module(lab_fixtures)
_spec = importlib.util.spec_from_file_location("report_page_tests", Path(__file__).resolve().parent /
                                               "test_report_page.py")
report_page_tests = importlib.util.module_from_spec(_spec)  # its check for references outside the file
_spec.loader.exec_module(report_page_tests)


def render(root: Path, language: str = "en") -> str:
    params = yaml.safe_load((root / "params.yaml").read_text())
    lab = params["lab"]
    return render_lab_page(load_lab(lab_fixtures.folders(root), list(lab["runs"]), lab["seeds"]), TEMPLATES,
                           ReportConfig(language=language, bigram_k=0.1))


@pytest.fixture(scope="module")
def html() -> str:
    return render(LAB)


@pytest.fixture(scope="module")
def html_pt() -> str:
    return render(LAB, "pt")


def paragraph(page: str, name: str) -> str:
    return re.search(rf'<p id="{name}-paragraph">(.*?)</p>', page, re.S).group(1)


def made(tmp_path: Path, runs: list) -> Path:
    root = tmp_path / "lab"
    lab_fixtures.main(root, runs)
    return root


def changed(name: str, **values) -> list:
    return [replace(run, **values) if run.name == name else run for run in lab_fixtures.RUNS]


def test_the_committed_fixtures_are_what_the_recipe_makes(tmp_path):
    root = made(tmp_path, lab_fixtures.RUNS)
    ours = sorted(p.relative_to(root) for p in root.rglob("*") if p.is_file())
    committed = sorted(p.relative_to(LAB) for p in LAB.rglob("*") if p.is_file())
    assert ours == committed and len(ours) == 7 * 3 * 6 + 3  # 7 runs × 3 seeds × 6 files, scale, cost, params
    assert [str(p) for p in ours if not _same(root / p, LAB / p)] == []


def _same(made_file: Path, committed: Path) -> bool:
    """Byte for byte, but JSON numbers to 1e-12: the last bit of a float sum differs between CPUs' vector paths."""
    if filecmp.cmp(made_file, committed, shallow=False):
        return True
    if made_file.suffix != ".json":
        return False
    return _close(json.loads(made_file.read_text()), json.loads(committed.read_text()))


def _close(a, b) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, int | float) and isinstance(b, int | float) and math.isclose(a, b, rel_tol=1e-12)
    return a == b


def test_every_run_s_best_loss_over_its_seeds_and_every_question_s_numbers_are_on_the_page(html):
    for run in lab_fixtures.RUNS:
        best = [yaml.safe_load((LAB / "metrics" / run.name / f"{seed}.json").read_text())["best_val_loss"]
                for seed in lab_fixtures.SEEDS]
        assert f"<td>{np.mean(best):.4f} ± {np.std(best, ddof=1):.4f}</td>" in html
        assert f"<td>{min(best):.4f} – {max(best):.4f}</td>" in html
    for heading in ("The √d_k scale", "The number of heads", "Positions", "Without attention"):
        assert heading in html
    assert html.count("<img ") == 7  # the scale: 2 and its trained pair's curves; heads: curves; positions: 2; cost


def test_the_committed_lab_says_what_its_numbers_say(html):
    assert "from the mask itself" in paragraph(html, "positions")  # no_positions' gap is 0.30
    assert "fewer heads was as good" in paragraph(html, "heads")  # h = 1 is 0.01 above h = 2
    assert "first rises" in paragraph(html, "scale") and "d_k = 16" in paragraph(html, "scale")
    assert "0.0499 nats/char higher (worse: beyond the 0.0149" in paragraph(html, "scale-trained")


def test_the_page_states_the_measured_seed_to_seed_spread_and_judges_by_it(tmp_path, html):
    # every fixture run's seeds lie at its mean + (-1, 0.2, 0.8) × 0.01: a pooled sd of 0.0091,
    # so two means of 3 seeds count as different beyond 2 × 0.0091 × √(2/3) = 0.0149
    noise = re.search(r'<p id="noise">(.*?)</p>', html, re.S).group(1)
    assert "deviation of 0.0091 nats/char" in noise and "more than 0.0149 apart" in noise and "7 runs" in noise
    assert "0.0399 nats/char higher (worse" in paragraph(html, "heads")  # h = 8: 1.84 against 1.80
    noisy = render(made(tmp_path, [replace(run, spread=0.05) for run in lab_fixtures.RUNS]))
    assert "0.0399 apart, within the 0.074" in paragraph(noisy, "heads")  # the same means, now level


def test_the_positions_paragraph_says_what_the_comparison_holds_fixed_and_every_run_s_order_gap(html):
    text = paragraph(html, "positions")
    assert text.startswith("What this comparison holds fixed: the runs differ only in the table")
    assert "√d_model" in text and "3 seeds" in text
    assert "Order is worth +0.8700 ± 0.0092 nats/char to the model with sinusoidal positions" in text


def test_a_model_without_positions_that_ignores_order_changes_the_statement(tmp_path, html):
    blind = render(made(tmp_path, changed("no_positions", gap=0.01)))
    assert "did not learn to use order" in paragraph(blind, "positions")
    assert "from the mask itself" not in paragraph(blind, "positions")
    assert "+0.0100" in paragraph(blind, "positions") and "+0.3000" in paragraph(html, "positions")


def test_fewer_heads_doing_better_or_worse_changes_the_statement(tmp_path):
    better = render(made(tmp_path / "better", changed("heads_1", best=1.70)))
    worse = render(made(tmp_path / "worse", changed("heads_1", best=1.90)))
    assert "fewer heads was better" in paragraph(better, "heads")
    assert "every reduction" in paragraph(worse, "heads") and "fewer heads was" not in paragraph(worse, "heads")


def test_renamed_runs_in_another_order_give_the_same_answers(tmp_path, html):
    runs = [replace(run, name=f"run_{i}") for i, run in enumerate(reversed(lab_fixtures.RUNS))]
    renamed = render(made(tmp_path, runs))
    for name in ("scale", "scale-trained", "heads", "positions"):
        assert paragraph(renamed, name) == paragraph(html, name)


def test_the_same_inputs_render_byte_identical_pages(html):
    assert render(LAB) == html


def test_the_portuguese_page_has_portuguese_prose_and_the_same_numbers(html_pt):
    assert '<html lang="pt-BR">' in html_pt and "O fator √d_k" in html_pt
    assert "a partir da própria máscara" in paragraph(html_pt, "positions")
    assert "1,8059" in html_pt and "The number of heads" not in html_pt


def test_the_page_loads_nothing_and_links_only_the_main_report(html):
    assert report_page_tests.external_references(html) == [REPORT_PAGE]
    assert not re.search(r"https?://", html) and "<script" not in html


def test_the_pages_link_each_other_by_the_names_dvc_gives_them():
    paths = yaml.safe_load((REPO / "dvc.yaml").read_text())["vars"][0]["path"]
    report, lab = Path(paths["report"]), Path(paths["lab_report"])
    assert report.parent == lab.parent and (report.name, lab.name) == (REPORT_PAGE, LAB_PAGE)


# --- the stage on its command line ------------------------------------------------------------------------


@pytest.fixture
def run_lab_report(run_stage):
    """pipeline/lab_report.py on the command line, in a bare environment: ``run_lab_report(root, out, params)``."""

    def run(root: Path, out: Path, params: Path | None = None) -> subprocess.CompletedProcess:
        return run_stage("lab_report", *lab_fixtures.cli_args(root), "--params", params or root / "params.yaml",
                         "--out", out, env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})

    return run


@pytest.fixture
def root(tmp_path) -> Path:
    shutil.copytree(LAB, tmp_path / "in")
    return tmp_path / "in"


def test_the_stage_writes_the_page_it_renders(root, tmp_path, html, run_lab_report):
    out = tmp_path / "reports" / "lab.html"
    result = run_lab_report(root, out)
    assert result.returncode == 0, result.stderr
    assert out.read_text() == render(root) and "lab_report: wrote" in result.stdout


@pytest.mark.parametrize("missing", ["models/heads_4/1337.json", "artifacts/no_positions/1338/order.json",
                                     "artifacts/scale.json", "artifacts/cost.json", "plots/sinusoidal/1339.csv"])
def test_a_missing_run_file_is_one_line_and_nothing_is_written(root, tmp_path, missing, run_lab_report):
    (root / missing).unlink()
    out = tmp_path / "reports" / "lab.html"
    result = run_lab_report(root, out)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    first, second = result.stderr.splitlines()
    assert first.startswith("lab_report: ") and str(root / missing) in first and "dvc repro lab_" in first
    assert second == f"lab_report: nothing written; {out} is unchanged"
    assert not out.parent.exists()


def test_params_without_the_lab_s_runs_are_refused(root, tmp_path, run_lab_report):
    params = tmp_path / "params.yaml"
    values = yaml.safe_load((root / "params.yaml").read_text())
    del values["lab"]["runs"]
    params.write_text(yaml.safe_dump(values))
    result = run_lab_report(root, tmp_path / "lab.html", params)
    assert result.returncode == 2 and "lab.runs is missing" in result.stderr.splitlines()[0]
    assert not (tmp_path / "lab.html").exists()
