"""One student's feedback as a page of its own: per function, the verdict, the mistake named and what to do.

A single HTML file with its style inline and nothing fetched (it opens offline, in an LMS's file viewer, or
attached to a message), in the language the results were worded in. Every text from the grade, the student's
name included, is escaped: a page shows it, never runs it. The class page links to these pages by
``page_name``.
"""

from __future__ import annotations

import html
from pathlib import PurePosixPath

from grader import template
from grader.functions.contract import FUNCTIONS
from grader.grade_status import GradeStatus
from grader.messages import Message, notation_of, text
from grader.module.contract import MODULE_NAMES
from grader.results import GradeResult, mistake_key
from mha.messages import written

STYLE = ("body{font-family:system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#222}"
         "h1{font-size:1.4rem}h2{font-size:1.1rem;margin-top:1.6rem}.pass{color:#1b6e20}.fail{color:#a4161a}"
         "li{margin:.3rem 0}.mistake{background:#fff4e5;padding:.5rem .8rem;border-left:4px solid #e08a00}"
         "pre{white-space:pre-wrap;background:#f4f4f4;padding:.5rem}")


def page_name(stem: str) -> str:
    """The page's file name for a student whose files are named ``stem`` (``grader.intake.names.file_stem``)."""
    return f"{stem}.html"


def _points(lang: str, score: float, max_score: float) -> str:
    return written(lang, f"{score:g} / {max_score:g}")


def render(result: GradeResult, student: str | None = None) -> str:
    """The whole page for one graded (or refused) hand-in, in ``result.lang`` and the notation of its language.

    It reads once: each test's line says only what differs (its case and what came back); a mistake is explained
    once per function, in a box under its tests."""
    lang, e = result.lang, html.escape
    notation = notation_of(result.language)
    worded = lambda key, **values: Message(key, values).text(lang, notation)  # noqa: E731
    name = student if student is not None else result.student
    parts = [f'<!doctype html><html lang="{"pt-BR" if lang == "pt" else "en"}"><head><meta charset="utf-8">',
             f"<title>{e(text(lang, 'page.title', student=name))}</title><style>{STYLE}</style></head><body>",
             f"<h1>{e(text(lang, 'page.title', student=name))}</h1>",
             f"<p><strong>{e(text(lang, 'page.total', points=_points(lang, result.score, result.max_score)))}"
             "</strong></p>"]
    if result.notes:
        parts.append(f"<h2>{e(text(lang, 'page.notes'))}</h2>")
        parts += [f"<pre>{e(note)}</pre>" for note in result.notes]
    for function in (*FUNCTIONS, *MODULE_NAMES):
        tests = [t for t in result.tests if t.function == function]
        if not tests:
            continue
        score, most = sum(t.score for t in tests), sum(t.max_score for t in tests)
        passed = all(t.passed for t in tests)
        verdict = text(lang, "page.all_pass") if passed else text(lang, "page.some_fail",
                                                                 failed=sum(not t.passed for t in tests),
                                                                 count=len(tests))
        parts.append(f'<h2 class="{"pass" if passed else "fail"}">{e(function)}: {_points(lang, score, most)}'
                     f" &mdash; {e(verdict)}</h2><ul>")
        for t in tests:
            mark = text(lang, "table.pass") if t.passed else text(lang, "table.fail")
            shown = (t.differs or t.feedback) if (not t.passed or t.noted) else ""
            parts.append(f"<li><strong>{e(t.name)}</strong> ({e(mark)}){': ' + e(shown) if shown else ''}</li>")
        parts.append("</ul>")
        for mistake in dict.fromkeys(m for t in tests for m in t.mistakes):  # in the order the tests name them
            title = Message(f"mistake_title.{mistake}")
            parts.append(f'<div class="mistake"><strong>{e(worded("page.mistake_titled", id=mistake, title=title))}'
                         f"</strong> {e(worded(mistake_key(mistake, function, result.language)))}</div>")
        if not passed:
            parts.append(f"<p>{e(worded('page.what_to_do', function=function))}</p>")
    parts.append(f"<p><small>{e(check_yourself(result))}</small></p></body></html>")
    return "\n".join(parts) + "\n"


def check_yourself(result: GradeResult) -> str:
    """The self-check line: the command that checks this student's own file with the public cases, in R alone
    for an R hand-in (``grader.template.r_check_command``), with the grader for a Python one."""
    lang, file = result.lang, PurePosixPath(result.file).name
    if result.language == "r":
        command = template.r_check_command(file or text(lang, "page.your_file") + ".R")
        return text(lang, "page.check_yourself_r", command=command)
    command = template.check_command(file or text(lang, "page.your_file") + ".py", lang)
    return text(lang, "page.check_yourself", command=command)


REASON_SHOWN = 500  # characters of a refusal's reason in a gradebook comment (the feedback page has it whole)


def summary(result: GradeResult, out_of: float | None = None) -> str:
    """One line for a gradebook's comment field: the total on the LMS's scale (``out_of``; the rubric's total
    without it), the mistakes named by their titles in the results' language and, for a hand-in that was not
    graded, why."""
    lang = result.lang
    score, most = (result.score, result.max_score) if out_of is None else (result.on_scale(out_of), out_of)
    parts = [text(lang, "page.total", points=_points(lang, score, most)) + "."]
    if result.mistakes:
        notation = notation_of(result.language)
        titles = "; ".join(Message(f"mistake_title.{m}").text(lang, notation) for m in result.mistakes)
        parts.append(text(lang, "page.comment_mistakes", titles=titles))
    if result.status != GradeStatus.GRADED and result.reason:
        reason = result.reason if len(result.reason) <= REASON_SHOWN else result.reason[:REASON_SHOWN - 1] + "…"
        parts.append(text(lang, "page.comment_reason", reason=reason))
    return " ".join(parts)
