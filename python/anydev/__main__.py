"""``python -m anydev ...`` is the ``anydev`` command."""

import sys

from .cli import finish, main

# Note [Exit without teardown] in cli.py: only where Python was started as
# `python -m anydev` (not under cProfile, coverage or a test's runpy).
finish(main(), getattr(sys, "orig_argv", [])[1:3] == ["-m", "anydev"])
