"""``python -m anydev ...`` is the ``anydev`` command."""

import sys

# Where Python was started as `python -m anydev` (not under cProfile, coverage
# or a test's runpy): the objects of the start-up (site, runpy, their imports)
# live as long as the process, so the cyclic collector need not walk them
# again (gc.freeze), and a scan ends without the interpreter's teardown
# (Note [Exit without teardown] in cli.py).
_DIRECT = getattr(sys, "orig_argv", [])[1:3] == ["-m", "anydev"]
if _DIRECT:
    import gc

    gc.freeze()

from .cli import finish, main  # noqa: E402 - after the freeze

finish(main(), _DIRECT)
