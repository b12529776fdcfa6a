"""Loading a submission as a notebook runs: statement by statement, within time, with the import policy.

- ``load_tolerantly`` runs the cells' top-level statements one after another; one that raises or runs past its
  time is skipped and recorded, the rest still run (as Jupyter's "run all" would, going on after an error).
- ``BlockGraderPackages`` and ``AllowedImports`` (on ``sys.meta_path``) are the import policy: the grader's
  packages never, then the standard library, the packages the rubric allows (the config's ``imports``, always
  given) and the submission's own helper modules.
- ``install_jupyter_stubs``: what a notebook finds without importing it (``get_ipython``, ``display``).
- ``forget_grader_modules``: nothing of the grader's (nor of this folder, ``_grader_inside``) in
  ``sys.modules`` when the student's code runs.
"""

import __future__

import ast
import builtins
import importlib.abc
import os
import signal
import sys
import time

BLOCKED = ("grader", "mha")


class BlockGraderPackages(importlib.abc.MetaPathFinder):
    """First on sys.meta_path: a clear message if a submission imports the grader's packages."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(
                f"the package '{name.split('.')[0]}' belongs to the grader and cannot be imported by a submission",
                name=name,
            )
        return None


def forget_grader_modules():
    """No module of the grader's in ``sys.modules`` when the submission is imported (none is put there; this
    holds it if one ever were): only the standard library, the allowed packages and this runner remain."""
    for name in [n for n in sys.modules if n.partition(".")[0] in BLOCKED or n.startswith("_grader")]:
        del sys.modules[name]


class _StatementTimeout(BaseException):
    """A top-level statement ran past its budget (raised by SIGALRM between two bytecodes)."""


def _on_alarm(signum, frame):
    raise _StatementTimeout


CELL_RUNNING_MAGICS = ("time", "timeit", "capture", "prun")  # %%time etc. run their cell; others do nothing


class _IPythonStub:
    """``get_ipython()`` where grading happens: shell lines and magics do nothing, as the note says."""

    def system(self, *args, **kwargs):
        return 0

    def getoutput(self, *args, **kwargs):
        return []

    def run_cell_magic(self, magic, line, cell):
        caller = sys._getframe(1).f_globals
        if magic in CELL_RUNNING_MAGICS:
            exec(compile(cell, "<cell>", "exec"), caller)
        elif magic == "writefile":  # a notebook writing its own helper module, then importing it
            args = line.split()
            if args:
                with open(os.path.basename(args[-1]), "a" if "-a" in args else "w", encoding="utf-8") as f:
                    f.write(cell)

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


def install_jupyter_stubs():
    """What a notebook finds without importing it: ``get_ipython`` and ``display``; plots go nowhere."""
    stub = _IPythonStub()
    builtins.get_ipython = lambda: stub
    builtins.display = lambda *args, **kwargs: None
    os.environ["MPLBACKEND"] = "Agg"  # no window to open: plt.show() has nothing to show
    os.environ.setdefault("MPLCONFIGDIR", os.path.abspath(".matplotlib"))
    import warnings

    warnings.filterwarnings("ignore", message=".*non-interactive, and thus cannot be shown")


class AllowedImports(importlib.abc.MetaPathFinder):
    """The submission's own imports: the standard library, the allowed packages and its helper modules."""

    def __init__(self, allowed, own_files, workdir):
        self.allowed = set(allowed)
        self.own_files = set(own_files)
        self.workdir = workdir  # helper modules, handed in or written by %%writefile, are files here

    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        # A name already in sys.modules never reaches this finder (the import system returns it first):
        # forget_grader_modules keeps the grader's out of there.
        if top in self.allowed or top in sys.stdlib_module_names:
            return None
        if os.path.exists(os.path.join(self.workdir, top + ".py")):
            self.own_files.add(os.path.join(self.workdir, top + ".py"))
            return None
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename.startswith("<frozen"):
            frame = frame.f_back
        if frame is not None and frame.f_code.co_filename in self.own_files:
            raise ModuleNotFoundError(f"No module named '{top}'", name=name)
        return None  # numpy, torch or matplotlib importing what they need


def _run_statement(code, namespace, seconds, setitimer=signal.setitimer, run=exec):
    """Run one top-level statement within ``seconds``; ("ok"|"timeout"|"error", the exception)."""
    try:
        setitimer(signal.ITIMER_REAL, seconds if seconds > 0.05 else 0.05)
        try:
            run(code, namespace)
        finally:
            setitimer(signal.ITIMER_REAL, 0)
    except _StatementTimeout:
        return "timeout", None
    except BaseException as exc:  # noqa: BLE001 - SystemExit included: the statement is skipped, the rest runs
        return "error", exc
    return "ok", None


def load_tolerantly(module, module_path, cells, seconds, budget, describe):
    """Run the cells' top-level statements one after another, as a notebook runs.

    A statement that raises, or runs past ``seconds`` (less once ``budget`` is spent), is skipped and
    recorded; the ones before and after it still run. A cell that does not parse is skipped whole,
    unless it is the whole file: then the file cannot be loaded and its SyntaxError is returned."""
    # Private copies: the statements run here may replace builtins (isinstance, len, ...) or time.monotonic.
    is_a, run, comp, monotonic = isinstance, exec, compile, time.monotonic
    Module, ImportFrom, features = ast.Module, ast.ImportFrom, __future__
    low, high, total, setitimer = min, max, sum, getattr(signal, "setitimer", None)
    whole_file = len(cells) == 1
    has_alarm = setitimer is not None
    if has_alarm:
        signal.signal(signal.SIGALRM, _on_alarm)
    namespace = module.__dict__
    skipped = []
    future_flags = 0
    start = monotonic()
    for cell in cells:
        try:
            tree = comp(cell["source"], module_path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
        except (SyntaxError, ValueError) as exc:
            if is_a(exc, SyntaxError) and exc.lineno is not None:
                exc.lineno += cell["line"] - 1
            if whole_file:
                return exc, skipped
            skipped.append({"kind": "error", **describe(exc)})
            continue
        ast.increment_lineno(tree, cell["line"] - 1)
        for statement in tree.body:
            code = comp(Module([statement], type_ignores=[]), module_path, "exec", future_flags, dont_inherit=True)
            if is_a(statement, ImportFrom) and statement.module == "__future__":
                # what a whole file compiled at once would apply to every later statement
                future_flags |= total(getattr(features, a.name).compiler_flag for a in statement.names
                                      if hasattr(features, a.name))
            left = high(budget - (monotonic() - start), 0.2)
            if has_alarm:
                outcome, exc = _run_statement(code, namespace, low(seconds, left), setitimer, run)
            else:
                try:
                    run(code, namespace)
                    outcome, exc = "ok", None
                except BaseException as error:  # noqa: BLE001 - as above
                    outcome, exc = "error", error
            if outcome == "timeout":
                skipped.append({"kind": "timeout", "line": statement.lineno, "seconds": low(seconds, left)})
            elif outcome == "error":
                skipped.append({"kind": "error", **describe(exc), "line": statement.lineno})
    return None, skipped[:50]
