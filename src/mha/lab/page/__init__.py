"""The lab page (stage `lab_report`): the course's questions answered from the lab's measurements.

    inputs     read every run's files and the scale statistics through mha.artifacts
    roles      which run answers which question, from the runs' model configs (never their names)
    findings   the numbers each question's paragraph is built from
    narrative  the paragraphs: sentences chosen and filled from the findings, as messages
    figures    the lab's figures (the report's styles, mha.report.figures)
    tables     the lab's tables (the report's table helper, mha.report.tables)
    render     puts it all through the Jinja2 template pipeline/templates/lab.html.j2
"""
