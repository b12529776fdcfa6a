"""The comparison report (stage `report`): one self-contained HTML page from the pipeline's outputs.

    inputs     read the stage's inputs through mha.artifacts (ArtifactError on anything wrong)
    baselines  unigram / add-k bigram losses on the validation split
    heads      statistics of each attention head, for its one-line reading
    narrative  the "what happens without attention" paragraph, from the numbers
    figures    matplotlib figures as deterministic SVG
    tables     pandas tables as HTML
    worked     the worked example, step by step
    runfacts   versions, threads, CPU, git commit and date
    messages   every text of the page, in English and Brazilian Portuguese
    render     puts it all through the Jinja2 template
"""
