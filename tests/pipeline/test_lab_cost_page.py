"""The lab page's section on what attention costs: from the fixtures, its numbers are the fits of the measurements
in both languages; on the committed page (docs/pages/lab.html), they are the lab_cost stage's metrics
(metrics/lab/cost.json, committed beside it)."""

import html as html_module
import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest
import yaml

from mha.lab.cost import kernel_findings, work_findings
from mha.lab.page.inputs import load_lab
from mha.lab.page.render import render_lab_page
from mha.schema import ReportConfig

REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
LAB = FIXTURES / "lab"
_spec = importlib.util.spec_from_file_location("lab_fixtures", FIXTURES / "make_lab_fixtures.py")
lab_fixtures = importlib.util.module_from_spec(_spec)
sys.modules["lab_fixtures"] = lab_fixtures  # its dataclasses look their module up
_spec.loader.exec_module(lab_fixtures)


def cost_section(page: str) -> str:
    match = re.search(r'<section id="cost".*?</section>', page, re.S)
    assert match, "the page has no section on attention's cost"
    return " ".join(html_module.unescape(re.sub(r"<[^>]+>", " ", match.group(0))).split())


def render(language: str) -> str:
    lab = yaml.safe_load((LAB / "params.yaml").read_text())["lab"]
    return render_lab_page(load_lab(lab_fixtures.folders(LAB), list(lab["runs"]), lab["seeds"]),
                           REPO / "pipeline" / "templates", ReportConfig(language=language, bigram_k=0.1))


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    return {language: render(language) for language in ("en", "pt")}


def test_the_section_states_the_fitted_exponents_and_the_bytes_per_square(pages):
    cost = lab_fixtures.COST
    explicit = kernel_findings(cost, cost.kernel("explicit"))
    fused = kernel_findings(cost, cost.kernel("sdpa"))
    work = work_findings(cost)
    text = cost_section(pages["en"])
    assert f"keep {explicit.bytes_per_square:.0f} bytes per T²" in text
    assert f"4 bytes per entry × {cost.batch} sequences × {cost.n_head} heads" in text
    assert f"the memory grows as T^{explicit.memory_slope_long:.2f}" in text
    assert f"The fused kernel keeps nothing of size T × T: its memory grows as T^{fused.memory_slope_long:.2f}" in text
    assert f"the operations grow as T^{work.slope_long:.2f}, as the square" in text
    assert f"{work.per_square:.0f} operations per T²" in text
    assert "Doubling the context from this model's block_size = 128 to 256" in text
    assert "runs/artifacts/lab/cost.json" in text and " ms" not in text  # no time: the machine's
    assert 'id="cost-h"' in pages["en"] and cost_section(pages["en"]).count("GFLOP") >= 2


def test_the_portuguese_section_writes_numbers_with_a_decimal_comma(pages):
    cost = lab_fixtures.COST
    explicit = kernel_findings(cost, cost.kernel("explicit"))
    text = cost_section(pages["pt"])
    assert "O custo da atenção" in text
    assert f"T^{explicit.memory_slope_long:.2f}".replace(".", ",") in text
    assert "Dobrar o contexto do block_size = 128 deste modelo para 256" in text


def test_the_committed_page_states_the_lab_cost_stage_s_metrics():
    page = (REPO / "docs" / "pages" / "lab.html").read_text(encoding="utf-8")
    metrics = json.loads((REPO / "metrics" / "lab" / "cost.json").read_text())
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    assert metrics["lengths"] == params["lab"]["cost"]["lengths"]
    text = cost_section(page)  # the committed page is English (params.yaml's report.language)
    explicit, fused, work = metrics["explicit"], metrics["sdpa"], metrics["work"]
    assert f"keep {explicit['memory_bytes_per_square']:.0f} bytes per T²" in text
    assert f"the memory grows as T^{explicit['memory_exponent_long']:.2f}" in text
    assert f"its memory grows as T^{fused['memory_exponent_long']:.2f}" in text
    assert f"the operations grow as T^{work['flops_exponent_long']:.2f}" in text
    assert f"{work['square_flops_per_t2']:.0f} operations per T²" in text
    # what the course claims: the weights' memory is the square of T, the fused kernel's memory is linear
    batch, heads, d_model = params["lab"]["cost"]["batch"], params["model"]["n_head"], params["model"]["n_embd"]
    assert explicit["memory_bytes_per_square"] == 4 * batch * heads
    assert work["square_flops_per_t2"] == 12 * batch * d_model
    assert 1.5 < explicit["memory_exponent_long"] <= 2.0 and fused["memory_exponent_long"] == pytest.approx(1.0)
    assert 1.75 <= work["flops_exponent_long"] <= 2.0
