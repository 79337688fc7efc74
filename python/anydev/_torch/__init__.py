"""anydev on the real PyTorch, behind ``anydev.torch`` and
``anydev.cpp_extension``: the legacy forwarders installed on ``torch.cuda``,
``torch.cuda.amp`` and ``torch.xpu`` (``adapter``), ``torch.accelerator`` for a
PyTorch that lacks it (``backport``) and the stand-in ``torch`` made of anydev
for ``anydev run --facade`` (``facade``), and the pytest plugin that counts the
legacy calls each test reaches (``pytest_plugin``, which reads the scan
baseline of migrate). torch itself is imported only when these run: ``import
anydev`` never imports it.

May import: migrate, runtime, compat, common, the native extensions.
"""
