"""The fixer: rewrites legacy calls that the compat table marks as mechanical.

    from anydev.fix import fix_paths, fix_source
    result = fix_paths(["src/"], unsafe=False)       # writes the files
    result = fix_paths(["src/"], diff=True)          # writes nothing; result.diff
    new, applied, skipped = fix_source(data, "x.py", findings, unsafe=True)

It works on the scanner's findings (:mod:`anydev.scan`), so it rewrites exactly
what ``anydev scan`` reports, and applies a row's rewrite only when the row's
``fix`` allows it: ``safe`` always, ``unsafe`` with ``unsafe=True``
(``--unsafe-fixes``), ``none`` never. Every finding it does not apply is
returned with the reason.

Calls
    A call is rewritten with the row's template (``torch.cuda.amp.autocast(
    dtype=x)`` becomes ``torch.amp.autocast("cuda", dtype=x)``): the call's
    arguments are bound to the legacy ``signature`` and placed where the
    template says (compat_map/SCHEMA.md). Only the callee and the arguments
    that change are edited, so a multi-line call keeps its layout, comments and
    trailing comma. A call the fixer cannot bind (``*args``/``**kwargs``, an
    unknown keyword, an argument the template has no place for, too many
    positional arguments) is left as it is and the reason reported. Without a
    template the callee is replaced and the arguments kept. Calls nested in the
    arguments of another are rewritten too. Inside an f-string a template's
    string literal takes the quote the f-string leaves free.
References
    A reference that is not a call (``fn = torch.cuda.empty_cache``,
    ``except torch.cuda.OutOfMemoryError``, an annotation, a C++ type) is
    renamed when the row's ``rename`` allows it and, for a row with a
    template, when the template called without arguments is the plain
    replacement (or the row is a class). One followed by an attribute or a
    member (``torch.cuda.Stream.priority_range``, ``CUDAGraph::replay``) is
    left alone: the replacement may not have it. A bare decorator of a
    ``decorator`` row (``@torch.cuda.amp.custom_fwd``) becomes the template
    called without arguments (``@torch.amp.custom_fwd(device_type="cuda")``).
Python imports
    Imports are rewritten with their uses: ``from torch.cuda import
    current_device as cd`` loses ``current_device as cd`` once every use of
    the name ``cd`` in the file was rewritten (the statement goes when it has
    no name left; a block left empty gets ``pass``). A name with a use that
    was not rewritten (an unsafe fix not asked for, a suppression comment, a
    parameter of the same name) keeps its import, and so does a re-export: a
    name listed in ``__all__``, imported and not used in an ``__init__.py``,
    or imported in a class body (a class attribute). A replacement spells the torch package as the code
    around it does: the finding's own first name (``th.cuda.synchronize()``
    becomes ``th.accelerator.synchronize()``), else an ``import torch [as
    X]`` of an enclosing function before it, else the module's; ``import
    torch`` is added after the module's docstring and leading imports only
    when none of those binds it.
C++ classes
    A legacy class is renamed where its replacement can be built from the same
    arguments: ``at::cuda::CUDAGuard g(t.get_device())`` becomes
    ``c10::DeviceGuard g(c10::Device(at::accelerator::getAccelerator(true).value(),
    t.get_device()))`` (a device index, told by its form: an integer literal,
    a cast to an integer type, ``.get_device()``/``.index()``, or a name
    declared with an integer type in the same function), a c10::Device argument
    is kept; declarations, brace initialization, temporaries and
    ``std::make_unique<T>(...)`` are understood. An argument whose type the
    fixer cannot tell, a guard whose arguments are not visible, a constructor
    the replacement lacks and a member of the object that the replacement lacks
    (``g.set_device(d)``, ``graph.capture_begin(pool, mode)``) leave the code
    as it is, with the reason. tests/python/fix/test_fix_cpp_compile.py compiles
    every form against PyTorch's headers.
C++ includes
    The headers a rewrite needs (``<ATen/DeviceAccelerator.h>`` for
    ``at::accelerator::*``, ``<c10/core/DeviceGuard.h>``, ...) are included
    after the file's last ``#include`` outside a conditional block, once, when
    the file does not include them yet; a file without any ``#include`` gets
    none (it relies on what is included before it).
C++ using-declarations
    ``using c10::cuda::current_device;`` is removed from a source file once
    every unqualified use of the name after it was rewritten; in a header it
    is kept (the files that include it may use the name).

Safety: edits are made on the file's text and written back in its own
encoding (the ``coding`` cookie of a Python file), with its byte-order mark,
line endings and file mode (and owner, where allowed), atomically (a temporary
file in the same folder renamed over it). A Python file that is not valid in
its encoding or does not parse (with the running Python) is reported and left
alone, and one is parsed again before it is written: if the rewrite would
break it, it is left as it was and the reason reported. A file is not written
through a symbolic link (the file or a folder between it and the tree it was
found under), nor when it has other hard links, nor when it changed after it
was scanned or read. Running the fixer twice changes nothing the second time.

Layout: this module is the public face; the fixer itself is the package
:mod:`anydev._migrate.fix`, one module per language, rule family and concern (its
docstring and docs/architecture.md list them).
"""

from __future__ import annotations

from ._compat.table import ROWS_BY_CODE, ROWS_BY_LEGACY, Row
from ._migrate.fix.engine import FileResult, FixResult, fix_paths, fix_source, unified_diff
from ._migrate.fix.templates import render_template

__all__ = ["FileResult", "FixResult", "fix_paths", "fix_source", "render_template",
           "unified_diff"]
# ROWS_BY_CODE, ROWS_BY_LEGACY and Row stay importable from here: the table the
# fixer reads (tests patch a row of it).
