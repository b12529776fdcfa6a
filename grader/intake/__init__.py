"""Intake: between "a student handed something in" and "code runs in the sandbox".

Single-file, batch and Gradescope grading all pass through here:

- ``finding``: which entries of a batch folder are students (files, folders, Moodle and Canvas downloads),
  with names told apart and safe to print;
- ``reading``: regular files only, opened without following links, sizes capped, a student's totals counted;
- ``archives``: zips read as streams, each member unpacked when read, with caps on members and size, no links,
  no paths that leave the zip;
- ``decoding``: UTF-8 (BOM or not), a coding line, UTF-16 with a BOM, else cp1252/latin-1 with a note;
- ``notebooks``: ``.ipynb`` code cells with nbformat; ``!cmd``/``%magic``/``%%cell`` lines turned into calls
  to a stub ``get_ipython()`` by IPython's own input transformer;
- ``handin``: the chosen file of one student (and the helper modules beside it) as a ``HandIn``, or a
  ``Refusal`` that says why and what to do;
- ``explain``: the hint a student can act on for each way loading fails;
- ``bounded``: all of the above in a helper process with its own memory and time limits, which is how the
  grader reads every hand-in (``bounded.read``).

Nothing here runs student code: it only reads bytes and parses them.
"""

from grader.intake.handin import HandIn, Refusal, open_path
from grader.intake.reading import Caps

__all__ = ["Caps", "HandIn", "Refusal", "open_path"]
