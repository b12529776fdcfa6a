"""Between the grader and a learning-management system: who a row is there, and what goes back.

- ``identity``: the LMS, the student's id there and the name as spelled, as gradebook columns;
- ``download``: a download zip, as the LMS makes it, unpacked under the intake's caps into a batch folder;
- ``feedback_page``: one student's feedback as a page of its own (pt and en, offline);
- ``exports``: Moodle's grading worksheet, Moodle's feedback-files zip, Canvas's gradebook import, a folder of pages;
- ``class_run``: the batch command's whole path, from the download to the exports.
"""
