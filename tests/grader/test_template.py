"""The starter file: its functions take exactly what the reference's take, in both languages."""

import ast
import inspect

import pytest

from grader import template
from grader.functions.contract import FUNCTIONS
from grader.messages import LANGS
from mha import reference


def _parameters(node: ast.FunctionDef) -> list[tuple[str, object]]:
    """(name, default) of each parameter the starter file writes; inspect's ``empty`` where there is none."""
    names = [a.arg for a in node.args.args]
    defaults = [ast.literal_eval(d) for d in node.args.defaults]
    return list(zip(names, [inspect.Parameter.empty] * (len(names) - len(defaults)) + defaults, strict=True))


@pytest.mark.parametrize("lang", LANGS)
def test_the_templates_functions_take_the_references_parameters_and_defaults(lang):
    tree = ast.parse(template.render(lang))
    written = {node.name: _parameters(node) for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert list(written) == list(FUNCTIONS)
    for function in FUNCTIONS:
        signature = inspect.signature(getattr(reference, function))
        expected = [(p.name, p.default) for p in signature.parameters.values()]
        assert written[function] == expected, function
