"""The migration tools behind ``anydev.scan`` and ``anydev.fix``: what the
scan reads of the table (``scan_table``, generated), its records
(``record``), ``# noqa`` (``noqa``), device literals (``literals``), the
outputs and baselines (``output``, ``formats``), the rules explained
(``rules``: what ``anydev rule`` prints), the target torch (``torch_versions``),
legacy calls read from build logs (``build_log``) and the fixer (``fix/``, a
subpackage of its own: docs/architecture.md, "The migration tools").

Scanning and fixing need no device: nothing here loads the runtime
(``anydev._C``), so ``anydev scan`` starts with the scanner alone.

May import: compat, common, the native extensions.
"""
