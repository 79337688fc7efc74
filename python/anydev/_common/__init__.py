"""What every subsystem of anydev shares, and nothing else: the TOML reader
(``toml``), the one reader of ``[tool.anydev]`` (``config``: every key, its
type, default and meaning, docs/configuration.md), the safe replacement of
a user's file and the opening of an input that never blocks (``files``, Note
[Replacing a file]) and JSON from elsewhere read in bounded time and memory
(``json_text``). The lowest layer: the
runtime, the compat layer, the migration tools and the command line all read
the configuration and write files through it.

May import: the native extensions.
"""
