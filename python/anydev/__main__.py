"""``python -m anydev ...`` is the ``anydev`` command."""

import sys

from ._cli.main import command

command(getattr(sys, "orig_argv", [])[1:3] == ["-m", "anydev"])
