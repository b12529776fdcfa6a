"""The code that runs inside the sandbox: standard library only, bound into the sandbox as this folder.

    wire          frames, values and answers: the one description of the wire, imported by the grader too
    confinement   namespaces, mounts, capabilities and limits of one submission's process tree
    server        the warm server: numpy and torch imported once, one isolated fork per submission
    loading       the student's file run statement by statement, the import policy, Jupyter's stubs
    serving       one submission: load it, answer the grader's calls until the pipe closes
    __main__      the entry point: ``python -I -S -B FOLDER serve CTL_FD`` or ``... FOLDER direct IN_FD OUT_FD``

Inside the sandbox the folder is the package ``_grader_inside`` (``__main__.py`` loads it so; the grader sees it
as ``grader.sandbox.inside``). Its modules import one another relatively and never ``grader`` or ``mha``, which
are not even in the sandbox's view of the disk; numpy and torch only once the grader has said where they live.
"""
