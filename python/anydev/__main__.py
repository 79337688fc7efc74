"""``python -m anydev ...`` is the ``anydev`` command."""

import sys

from .cli import command

command(getattr(sys, "orig_argv", [])[1:3] == ["-m", "anydev"])
