"""Between the grader and a learning-management system: who a row is there, and what goes back.

- ``identity``: the LMS, the student's id there and the name as spelled, as gradebook columns;
- ``download``: a download zip, as the LMS makes it, unpacked under the intake's caps into a batch folder;
- ``feedback_page``: one student's feedback as a page of its own (pt and en, offline);
- ``moodle``: everything Moodle names: its download's folders and files, its grading worksheet, its feedback-files zip;
- ``canvas``: everything Canvas names: its download's files, its gradebook import;
- ``exports``: what an export is (``Export``: made with what it needs, ``write(rows, out_of)``), the rows it reads
  (``Graded``) and the folder of pages for any LMS;
- ``class_run``: the batch command's whole path, from the download to the exports, one loop over those asked for.
"""
