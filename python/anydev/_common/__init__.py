"""What every subsystem of anydev shares, and nothing else: the TOML reader
(``toml``), the one reader of ``[tool.anydev]`` (``config``: every key, its
type, default and meaning, docs/configuration.md) and the safe replacement of
a user's file (``files``, Note [Replacing a file]). The lowest layer: the
runtime, the compat layer, the migration tools and the command line all read
the configuration and write files through it.

May import: the native extensions.
"""
