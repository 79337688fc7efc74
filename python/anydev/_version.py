"""anydev's version, read without loading the runtime: ``anydev --version`` and
``anydev.__version__`` need nothing native. CMakeLists.txt (``project(anydev
VERSION ...)``, which libanydev reports) and pyproject.toml say the same;
tests/python/test_packaging.py checks that all of them agree."""

__version__ = "0.1.0"
