"""The ``anydev`` command: the command tree and the fast path of ``anydev
scan`` (``main``, Note [Fast argv]), the other commands (``commands``: doctor,
demo, tour, run, report), each tool's command line (``scan``, ``fix``,
``rule``), what every process of ``anydev run`` does (``run_child``), shell
completion (``completion``) and the demo (``demo``). The top of the package:
nothing imports it but python/bin/anydev and ``python -m anydev``.

May import: server, dashboard, torch, migrate, runtime, compat, common, the native extensions.
"""
