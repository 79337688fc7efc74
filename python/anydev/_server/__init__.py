"""The editor server: ``anydev server``, a Language Server (LSP 3.17 over
stdio, JSON-RPC written here, no dependency) that shows ``anydev scan``'s
findings in an editor as the user types, in Python, C/C++/CUDA/HIP files and
the code cells of Jupyter notebooks, offers ``anydev fix``'s rewrites and
``# noqa`` suppressions as code actions, and ``anydev rule``'s explanation on
hover (docs/editors.md).

    rpc.py        the JSON-RPC 2.0 base protocol: Content-Length frames read
                  and written, messages checked (garbage answered, never fatal)
    documents.py  open documents: text with full and incremental changes in
                  UTF-8, UTF-16 or UTF-32 positions; notebooks and their cells
    server.py     the language server: lifecycle, diagnostics, code actions,
                  hover, the configuration per file, the client's process

A file is checked by anydev._migrate.check, the function ``anydev scan``
checks a file with, so the server reports what the command line reports.

It sits beside cli, which alone imports it (``anydev server``).

May import: migrate, compat, common, the native extensions.
"""
