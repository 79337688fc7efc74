"""``python -m anydev ...`` is the ``anydev`` command."""

import sys

from .cli import main

sys.exit(main())
