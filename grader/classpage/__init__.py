"""The class page: one offline HTML page for the instructor, from a batch's gradebook, results and hand-ins.

``gradebook`` reads the gradebook and the results JSON into per-student records (each file by its record's own reader,
``grader.records``, as is the run record the batch writes beside its gradebook); ``stats`` computes the distribution,
the pass rates, the misconceptions and who needs attention; ``similarity`` finds hand-ins that are unusually close;
``render`` words and lays out the page (``class_page.html.j2``, ``messages.toml``).
"""

# The share of a pair's code found in each other above which the page shows the pair (docs/instructors.md: "Similar
# hand-ins"); here, not in ``similarity``, so that the command line names it without importing the comparison.
DEFAULT_THRESHOLD = 0.8
