"""The files one stage writes and another reads, each a typed record with its writer and validating reader.

    records    reading JSON into a record: ArtifactError naming the file, the field and what to do
    run        a training run: its results, learning curve, run record and sample
    attention  the attention maps of the trained model on a validation excerpt
    worked     the worked example's matrices and its comparisons with the published ones
    lab        the course lab's files: the scale statistics and each controlled run's order sensitivity

Writers and readers sit side by side, so a file's format is defined once; tests build their fixtures
with the same writers.
"""
