"""Every file the grader writes and another part of it reads back: each a record, its writer and its validating
reader side by side.

- ``gradebook``: the batch's CSV gradebook (``grades.csv``), written by ``grader.batch``, read by the class page;
- ``run_record``: how a batch ran (``grades.run.json``), written by the batch, read by the class page;
- ``results_json``: one hand-in's results (Gradescope's results.json), written by
  ``grader.results.GradeResult.to_gradescope``, read by the class page.
"""
