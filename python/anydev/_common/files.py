"""Replacing a file safely, for everything anydev writes over a user's file:
``anydev fix`` (sources), ``anydev scan -o`` / ``--baseline`` (outputs) and
the runtime report. See Note [Replacing a file]."""

from __future__ import annotations

import _thread
import errno
import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover - `typing` (and `re`) cost `anydev scan -o` 40M instructions
    from typing import BinaryIO, Iterable, Optional

# Note [Replacing a file]
# What a user's file keeps when anydev writes over it, and what a failure or a
# crash leaves:
#
# * A file with one name is replaced atomically: the new text goes to a
#   temporary file in the same folder, is flushed to the disk (fsync) and is
#   renamed over the old one, so a reader, a full disk or a crash sees the old
#   file or the new one, never part of one. A report that a run writes and the
#   next writes again (`anydev scan -o`) is not flushed (durable=False): a
#   reader still sees the whole old report or the whole new one, and only a
#   crash of the machine in the seconds after the rename can leave it empty,
#   as it can the output of `rg > file` or ruff's --output-file; the flush of
#   the 200 MB tree's 40 MB JSON report was 14 to 21 ms of a 0.28 s run. The
#   new file gets the old one's owner and group where allowed (chown; a setgid folder would give it the
#   folder's group otherwise), then its permission bits (chmod after chown,
#   which clears setuid/setgid), then its extended attributes (ACLs are some),
#   each where the system lets us. This is better than black and ruff, which
#   truncate and rewrite every file in place (checked on this machine: `ruff
#   format` of ruff 0.17.6 and black 26.10.1 keep every file's inode, write
#   through symbolic links, and as root rewrite a read-only file).
# * A file with several hard links is rewritten in place, as black and ruff
#   do: a rename would give only this name the new text and leave the others
#   the old one (and a different owner or mode could not be kept at all). The
#   window in which a crash leaves part of the file is made as small and as
#   recoverable as we can: the space the new text needs is reserved first
#   (posix_fallocate, so a full disk fails before a byte changes), the old
#   text is copied to a temporary file beside it (fsynced; removed after the
#   write, and left, with its name in the error, only when the write and the
#   restore both failed), and an error or an interrupt during the write puts
#   the old text back before it is raised. Only a crash of the machine or a
#   SIGKILL in the middle of the write leaves a part of the file, with the
#   copy beside it. The inode, owner, mode and attributes are the file's own.
# * A symbolic link is written through (its target is replaced as above), as
#   a shell's `>` does; the link stays a link. `anydev fix` does not get here
#   for a link: it refuses to write through one (fix.py). But only a link
#   that no other user can have planted or swapped is followed: see Note
#   [Links another user planted].
# * What is not a regular file is never renamed over: a device, a FIFO or a
#   socket is opened and written to (`-o /dev/stdout`, `-o /dev/null`), a
#   folder is refused (EISDIR). As root, `anydev report merge -o /dev/null`
#   renamed a regular file over /dev/null.
# * A file the process may not write (a read-only file, or another user's,
#   for a user other than root) is refused with EACCES and left alone, as
#   ruff does (checked as user nobody: "Failed to write ro.py: Permission
#   denied"): a rename would replace it, since that needs only the folder to
#   be writable, and a user who made a file read-only did not ask for that.
#
# Tested in tests/python/common/test_files.py.

# Note [Links another user planted]
# A link is resolved here in user space (readlink), and the kernel's own guard
# does not apply to that: with fs.protected_symlinks=1 (the default of most
# distributions; Documentation/admin-guide/sysctl/fs.rst in the Linux tree)
# the kernel refuses to follow, in a sticky world-writable folder such as
# /tmp, a link whose owner is neither the follower nor the folder's owner,
# because another user can plant one there (`ln -s /home/bob/.ssh/config
# /tmp/report.json`) and wait for bob to write to the name. Following such a
# link with readlink and renaming over its target replaced a root-only file in
# a 0700 folder. So a link is followed only when it and the folder it sits in
# belong to the user or to root: nobody else can have put it there or swapped
# it since. Any other link is refused with an error naming its owner; the
# user can give the target's own path. This is stricter than the kernel, which
# also trusts the folder owner's links in any folder and everyone's outside
# sticky ones: a group-writable project folder lets a colleague plant a link
# just as well. Every link of a chain is checked, hop by hop; the folders on
# the way are opened by the kernel, which applies its own rule to them.


class _IgnoreOSErrors:
    """``contextlib.suppress(OSError)``, without importing contextlib (which
    imports collections, functools and their modules: a fifth of what
    anydev's own modules cost `anydev scan -o`)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, value, traceback) -> bool:
        return kind is not None and issubclass(kind, OSError)


_IGNORE_OS_ERRORS = _IgnoreOSErrors()


def _writable(path: str) -> bool:
    if os.access in os.supports_effective_ids:
        return os.access(path, os.W_OK, effective_ids=True)
    return os.access(path, os.W_OK)  # pragma: no cover - platforms without faccessat


def replace_atomically(path: str, chunks: Iterable[bytes], *, mode: Optional[int] = None,
                       owner: Optional[tuple[int, int]] = None, prefix: str = ".anydev-",
                       durable: bool = True) -> None:
    """Writes ``chunks`` over ``path`` (Note [Replacing a file]): a new file
    atomically renamed over it when it has one name, or the same inode
    rewritten in place when it has several hard links; a symbolic link is
    written through. ``mode``: the permission bits of a new or renamed file
    (default: the old file's, else 0600); ``owner``: its
    (uid, gid), where allowed (default: the old file's). On any failure
    ``path`` is left as it was (or, when even that failed, the error names the
    copy of its old text) and no temporary file is left. ``durable=False``:
    a new file is renamed over the old one without being flushed to the disk
    first (a report the next run writes again; Note [Replacing a file])."""
    target = resolve_link(path)
    try:
        st: Optional[os.stat_result] = os.stat(target)
    except FileNotFoundError:
        st = None
    if st is not None and stat.S_ISREG(st.st_mode):
        if not _writable(target):
            raise PermissionError(errno.EACCES,
                                  "Permission denied (no write permission on the file)", path)
        if st.st_nlink > 1:
            _rewrite_in_place(target, b"".join(chunks), prefix)
            return
    elif st is not None and stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, "Is a directory", path)
    elif st is not None:  # a device, a FIFO, a socket: written to, never renamed over
        with open(target, "wb") as f:
            f.writelines(chunks)
        return
    _rename_over(target, chunks, st, mode, owner, prefix, durable)


class UntrustedLinkError(PermissionError):
    """A symbolic link another user may have planted (Note [Links another user
    planted]): anydev does not write through it."""


def _owner_name(uid: int) -> str:
    try:
        import pwd

        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def resolve_link(path: str) -> str:
    """``path``, or the file its chain of symbolic links leads to when each
    link of it, and the folder each sits in, belongs to the user or to root
    (Note [Links another user planted]); UntrustedLinkError otherwise. A
    dangling link resolves to the name it points at; a loop is ELOOP."""
    if not hasattr(os, "geteuid"):  # pragma: no cover - not POSIX
        return os.path.realpath(path) if os.path.islink(path) else path
    trusted = {os.geteuid(), 0}
    cur = path
    for _ in range(40):  # the kernel's MAXSYMLINKS
        try:
            st = os.lstat(cur)
        except FileNotFoundError:
            return cur
        if not stat.S_ISLNK(st.st_mode):
            return cur
        folder = os.path.dirname(os.path.abspath(cur))
        owner = os.stat(folder).st_uid
        if st.st_uid not in trusted or owner not in trusted:
            who = (f"the link belongs to {_owner_name(st.st_uid)}" if st.st_uid not in trusted
                   else f"its folder {folder} belongs to {_owner_name(owner)}")
            raise UntrustedLinkError(
                errno.EACCES, f"not written through a symbolic link that another user could "
                f"have placed ({who}); write to the file's own path", cur)
        nxt = os.readlink(cur)
        cur = nxt if os.path.isabs(nxt) else os.path.join(os.path.dirname(cur), nxt)
    raise OSError(errno.ELOOP, "Too many levels of symbolic links", path)


def open_input(path: str, what: str = "file") -> BinaryIO:
    """Opens ``path`` for reading without blocking in open(): a named FIFO with
    no writer would wait there forever. A regular file, a pipe passed by the
    shell (``<(zcat log.gz)``, /dev/fd/N) and a character device (/dev/stdin)
    are read; a named FIFO, a socket or a folder is refused with an OSError
    that says what it is (as the scanned files and --config are)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        kind = _kind(st.st_mode)
        if kind is None and stat.S_ISFIFO(st.st_mode):
            # /dev/fd/N and /proc/self/fd/N name an open pipe (a link to
            # "pipe:[inode]", not to a path); any other name of a FIFO is one
            # in the file system, which a process may open with no writer.
            try:
                real = os.path.realpath(path)
                named = stat.S_ISFIFO(os.lstat(real).st_mode)
            except OSError:
                named = False
            if named:
                kind = "a FIFO"
        if kind is not None:
            raise OSError(errno.EINVAL, f"not a regular file ({kind}); a {what} is read "
                          f"from a file or a pipe", path)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _kind(mode: int) -> Optional[str]:
    """What refuses to be read as an input, in words; None for what may be."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISBLK(mode):
        return "a block device"
    return None


def _temp(target: str, prefix: str, suffix: str = ".tmp", live: bool = False
          ) -> tuple[int, str]:
    """A new file beside ``target``, mode 0600, opened for writing: what
    tempfile.mkstemp makes, without importing tempfile (7 ms of a 70 ms `anydev
    scan -o`: it imports random, shutil and their modules). Its name holds
    the process's pid (Note [Temporary files left behind]). ``live``: the
    name is one of the temporary files a stop signal removes, registered
    before the file exists (the caller discards it)."""
    folder = os.path.dirname(os.path.abspath(target))
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        name = os.path.join(folder, f"{prefix}{os.getpid()}-{os.urandom(6).hex()}{suffix}")
        if not live:
            try:
                return os.open(name, flags, 0o600), name
            except FileExistsError:
                continue
        with _temps_lock:
            if _stopping:
                raise InterruptedError(errno.EINTR, "a stop signal is ending the process",
                                       folder)
            _live_temps.add(name)
            try:
                return os.open(name, flags, 0o600), name
            except FileExistsError:
                _live_temps.discard(name)
                continue
            except BaseException:
                _live_temps.discard(name)
                raise
    raise FileExistsError(errno.EEXIST, "no unused temporary file name", folder)


# Note [Temporary files left behind]
# A new text goes to a temporary file beside the old one, which is renamed
# over it or, on any error or interrupt, removed. A process killed in between
# leaves it: `anydev fix` stopped by SIGTERM (what `timeout`, Slurm and
# Kubernetes send) or SIGKILL left 4 to 8 `.anydev-fix-*.tmp` files in a
# user's tree (no source was ever half-written: the rename is atomic). So:
# * while :func:`removing_temps_on_signals` is active (anydev fix's writes),
#   SIGTERM and SIGHUP remove the temporary files being written, then end the
#   process as the signal would have (SIGINT already does it: the interrupt
#   unwinds through the writer's own cleanup);
# * a temporary file's name holds its process's pid, `<prefix><pid>-<12 hex
#   digits>.tmp`, and :func:`remove_stale_temps` removes those whose process
#   is gone, or that are over a day old whatever their pid says (a pid is
#   reused), before a run writes beside them; the caller says so.
# The copy of a file's old text that an in-place rewrite keeps beside it
# while it writes (a file with several hard links) is not one of them: it is
# named `*.old`, and a crash in the middle leaves the user's only copy of the
# old text there, which the error names; nothing removes it but the user.
#
# A thread may be making its temporary file while the handler runs (the
# writes overlap: Note [Writes] in anydev/_migrate/fix/engine.py): the file
# made after the handler's look at the set was left (tests/python/common/
# test_files.py, once in a full run on a loaded machine). So a name is registered
# before its file is made, both under one lock the handler takes too, and
# once the handler has run no temporary file is made any more. (A reentrant
# lock: the handler runs in the main thread, which may hold it.)
_live_temps: set = set()
_temps_lock = _thread.RLock()
_stopping = False
_STALE_AGE_S = 24 * 3600


def _stop_signal_handler(signum: int, frame: object) -> None:
    import signal

    global _stopping
    with _temps_lock:
        _stopping = True
        for name in list(_live_temps):
            with _IGNORE_OS_ERRORS:
                os.unlink(name)
    signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signum})
    os.kill(os.getpid(), signum)


class removing_temps_on_signals:  # noqa: N801 - used as a function, in a `with`
    """For the ``with`` block: SIGTERM and SIGHUP remove the temporary files
    being written before the process ends (Note [Temporary files left
    behind]). Installed only from the main thread, where their action is the
    default one; restored after."""

    def __enter__(self) -> "removing_temps_on_signals":
        self._saved: list = []
        try:
            import signal
            import threading

            if threading.current_thread() is not threading.main_thread():
                return self
            for name in ("SIGTERM", "SIGHUP"):
                signum = getattr(signal, name, None)
                if signum is not None and signal.getsignal(signum) is signal.SIG_DFL:
                    signal.signal(signum, _stop_signal_handler)
                    self._saved.append(signum)
        except (ImportError, ValueError, OSError):
            pass
        return self

    def __exit__(self, *exc: object) -> None:
        import signal

        for signum in self._saved:
            with _IGNORE_OS_ERRORS:
                signal.signal(signum, signal.SIG_DFL)


def remove_stale_temps(folder: str, prefix: str) -> list:
    """Removes from ``folder`` the temporary files named ``<prefix><pid>-<12
    hex digits>.tmp`` whose process is gone, or that are over a day old
    (Note [Temporary files left behind]); returns their paths."""
    import re

    pattern = re.compile(re.escape(prefix) + r"(\d+)-[0-9a-f]{12}\.tmp")
    removed: list = []
    try:
        entries = list(os.scandir(folder or "."))
    except OSError:
        return removed
    import time

    now = time.time()
    for e in entries:
        m = pattern.fullmatch(e.name)
        if m is None:
            continue
        try:
            st = e.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode) or (hasattr(os, "geteuid") and
                                            st.st_uid != os.geteuid()):
            continue  # not a file of ours
        pid = int(m.group(1))
        path = os.path.join(folder, e.name)  # as the caller names the folder
        if pid != os.getpid() and now - st.st_mtime < _STALE_AGE_S and _alive(pid):
            continue  # being written by a running process
        if pid == os.getpid() and os.path.abspath(path) in map(os.path.abspath, _live_temps):
            continue
        try:
            os.unlink(path)
        except OSError:
            continue
        removed.append(path)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # another user's process: it exists
    return True


def _rename_over(target: str, chunks: Iterable[bytes], st: Optional[os.stat_result],
                 mode: Optional[int], owner: Optional[tuple[int, int]], prefix: str,
                 durable: bool = True) -> None:
    old = st if st is not None and stat.S_ISREG(st.st_mode) else None
    if old is not None:
        mode = stat.S_IMODE(old.st_mode) if mode is None else mode
        owner = (old.st_uid, old.st_gid) if owner is None else owner
    fd, tmp = _temp(target, prefix, live=True)
    try:
        with os.fdopen(fd, "wb") as f:
            f.writelines(chunks)
            f.flush()
            if durable:
                os.fsync(f.fileno())
        if owner is not None and hasattr(os, "chown"):
            t = os.stat(tmp)
            if (t.st_uid, t.st_gid) != owner:
                with _IGNORE_OS_ERRORS:
                    os.chown(tmp, *owner)
                # an unprivileged user may still keep the group (one of theirs)
                if os.stat(tmp).st_gid != owner[1]:
                    with _IGNORE_OS_ERRORS:
                        os.chown(tmp, -1, owner[1])
        if mode is not None:
            os.chmod(tmp, mode)  # after chown, which clears setuid and setgid
        if old is not None:
            _copy_xattrs(target, tmp)
        os.replace(tmp, target)
    except BaseException:
        with _IGNORE_OS_ERRORS:
            os.unlink(tmp)
        raise
    finally:
        _live_temps.discard(tmp)


def _copy_xattrs(src: str, dst: str) -> None:
    """Copies what extended attributes the system lets us (Linux: user.*,
    ACLs; security.* needs privileges and may fail, silently)."""
    listxattr = getattr(os, "listxattr", None)
    if listxattr is None:  # pragma: no cover - not Linux
        return
    try:
        names = listxattr(src)
    except OSError:
        return
    for name in names:
        with _IGNORE_OS_ERRORS:
            os.setxattr(dst, name, os.getxattr(src, name))


def _rewrite_in_place(target: str, data: bytes, prefix: str) -> None:
    with open(target, "r+b") as f:
        fd = f.fileno()
        old = f.read()
        if len(data) > len(old) and hasattr(os, "posix_fallocate"):
            try:
                os.posix_fallocate(fd, 0, len(data))  # a full disk fails here, first
            except OSError as e:
                if e.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
                    raise
        copy: Optional[str] = None
        try:
            cfd, copy = _temp(target, prefix, ".old")  # never removed by a later run
            with os.fdopen(cfd, "wb") as c:
                c.write(old)
                c.flush()
                os.fsync(c.fileno())
        except OSError:  # a folder we may not write to: no copy, the rest holds
            if copy is not None:
                with _IGNORE_OS_ERRORS:
                    os.unlink(copy)
            copy = None
        restored = True  # the file holds all of one text: the copy may go
        try:
            _overwrite(f, data)
        except BaseException as e:
            try:
                _overwrite(f, old)
            except BaseException:
                restored = False
                if copy is not None and isinstance(e, OSError):
                    raise OSError(e.errno, f"{e.strerror}; the file may be partly written, "
                                  f"and its old text is in {copy}", target) from e
                raise e
            raise
        finally:
            if copy is not None and restored:
                with _IGNORE_OS_ERRORS:
                    os.unlink(copy)


def _overwrite(f: BinaryIO, data: bytes) -> None:
    """Writes ``data`` over the whole of the open file ``f`` and flushes it to the disk."""
    f.seek(0)
    f.write(data)
    f.truncate()
    f.flush()
    os.fsync(f.fileno())
