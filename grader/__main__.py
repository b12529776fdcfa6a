"""``python -m grader``: hand off to the command line."""

from grader.cli import main

raise SystemExit(main())
