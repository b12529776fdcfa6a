"""The sandbox: each submission runs in a process tree of its own, and only numbers come back (docs/isolation.md).

    isolation         the modes (namespaces, uid, trusted), which one this machine allows, bubblewrap's view of the disk
    launch            the launchers that start and end a submission's process tree: the warm server, or a plain
                      child; what to preload, chosen by the caller (``preload_for``)
    child             what a launcher hands the session: a running child, its typed end, ``LaunchError``
    inside/           the child side, run inside the sandbox as a folder (standard library only): the wire both sides
                      speak (inside/wire.py), confinement, the fork server, loading, serving calls
    child_config      what the child is told to load a hand-in (the first frame's config), and what it says it skipped
    session           the grader's side: one submission's child, given a hand-in, its calls and answers (``Sandbox``)
    outcome           what a load or call came to (``Outcome``, its ``Status``): a leaf, imported by the judges too
    limits            every limit a submission runs under (``Limits``)
    printable         what a submission printed, made safe to show
    memory_cgroup     a memory cgroup per submission, v1 or v2
    memory_placement  a launcher's children placed in those groups and ranked first for the OOM killer (``Placement``)
    uid_lifecycle     a sandbox uid as root: drawn free, run as (the setpriv prefix), killed and cleaned after
    uid_leftovers     what a uid leaves behind in the uid mode, found and removed
"""
