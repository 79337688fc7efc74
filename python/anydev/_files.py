"""Replacing a file atomically, for everything anydev writes over a user's
file: ``anydev fix`` (sources), ``anydev scan -o`` / ``--baseline``
(outputs) and the runtime report."""

from __future__ import annotations

import contextlib
import os
from typing import Iterable, Optional


def replace_atomically(path: str, chunks: Iterable[bytes], *, mode: Optional[int] = None,
                       owner: Optional[tuple[int, int]] = None, prefix: str = ".anydev-") -> None:
    """Writes ``chunks`` to a temporary file in ``path``'s folder, flushes it to
    the disk and renames it over ``path``: a reader, or a crash, sees the old
    file or the new one, never part of one. ``mode``: the new file's
    permission bits (default: tempfile.mkstemp's, 0600); ``owner``: the
    (uid, gid) to give it where allowed. On any failure the temporary file is
    removed and ``path`` is left as it was."""
    import tempfile  # not at import time: the runtime imports this module

    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp",
                               dir=os.path.dirname(os.path.abspath(path)))
    try:
        with os.fdopen(fd, "wb") as f:
            f.writelines(chunks)
            f.flush()
            os.fsync(f.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        if owner is not None and hasattr(os, "chown"):
            t = os.stat(tmp)
            if (t.st_uid, t.st_gid) != owner:
                with contextlib.suppress(OSError):
                    os.chown(tmp, *owner)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
