"""anydev._common.files.replace_atomically: what a user's file keeps when anydev
writes over it (Note [Replacing a file] in anydev/_common/files.py)."""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
import textwrap

import pytest

from anydev._common import files as _files
from anydev._common.files import replace_atomically

from conftest import run_cli


def _names(d):
    return sorted(os.listdir(d))


def test_a_file_with_one_name_is_renamed_over(tmp_path):
    p = tmp_path / "a.py"
    p.write_bytes(b"old\n")
    before = os.stat(p).st_ino
    replace_atomically(str(p), [b"new", b"\n"])
    assert p.read_bytes() == b"new\n"
    assert os.stat(p).st_ino != before
    assert _names(tmp_path) == ["a.py"]


def test_sources_and_baselines_are_flushed_before_the_rename_and_scan_reports_are_not(
        tmp_path, monkeypatch):
    """Note [Replacing a file]: what the user keeps (a fixed source, a
    baseline) reaches the disk before it replaces the old file; a report the
    next run writes again (`anydev scan -o`) is renamed over unflushed."""
    monkeypatch.chdir(tmp_path)
    real_fsync, flushed = os.fsync, []

    def fsync(fd):
        flushed.append(os.readlink(f"/proc/self/fd/{fd}") if sys.platform == "linux" else fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    (tmp_path / "x.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    replace_atomically("a.py", [b"new\n"])
    assert len(flushed) == 1
    rc, _, err = run_cli("scan", "x.py", "--output-format", "json", "-o", "out.json")
    assert rc == 1 and "AD" in (tmp_path / "out.json").read_text(), err
    assert len(flushed) == 1 and _names(tmp_path) == ["a.py", "out.json", "x.py"]
    rc, _, err = run_cli("scan", "x.py", "--write-baseline", "base.json")
    assert (tmp_path / "base.json").exists(), err
    assert len(flushed) == 2


def test_hard_links_keep_one_inode_and_all_see_the_new_text(tmp_path):
    a, b = tmp_path / "a.py", tmp_path / "sub" / "b.py"
    b.parent.mkdir()
    a.write_bytes(b"old text, longer than the new one\n")
    os.link(a, b)
    os.chmod(a, 0o640)
    ino = os.stat(a).st_ino
    replace_atomically(str(a), [b"new\n"], mode=0o600)
    assert a.read_bytes() == b.read_bytes() == b"new\n"
    assert os.stat(a).st_ino == os.stat(b).st_ino == ino and os.stat(a).st_nlink == 2
    assert stat.S_IMODE(os.stat(a).st_mode) == 0o640  # the inode's own
    replace_atomically(str(b), [b"a longer text than before, " * 100])
    assert a.read_bytes() == b"a longer text than before, " * 100
    assert _names(tmp_path) == ["a.py", "sub"] and _names(b.parent) == ["b.py"]


def test_a_failed_in_place_write_puts_the_old_text_back(tmp_path, monkeypatch):
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_bytes(b"old\n")
    os.link(a, b)
    ino = os.stat(a).st_ino
    real_fsync, failed = os.fsync, []

    def fsync(fd):
        if os.fstat(fd).st_ino == ino and not failed:
            failed.append(fd)
            raise OSError(errno.EIO, "Input/output error")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(OSError, match="Input/output error"):
        replace_atomically(str(a), [b"new text\n"])
    assert failed and a.read_bytes() == b.read_bytes() == b"old\n"
    assert _names(tmp_path) == ["a.py", "b.py"]  # the copy of the old text is gone


def test_a_full_disk_fails_before_an_in_place_write_changes_a_byte(tmp_path, monkeypatch):
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_bytes(b"old\n")
    os.link(a, b)

    def fallocate(fd, offset, length):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "posix_fallocate", fallocate)
    with pytest.raises(OSError, match="No space left"):
        replace_atomically(str(a), [b"a longer new text\n"])
    assert a.read_bytes() == b"old\n"
    assert _names(tmp_path) == ["a.py", "b.py"]


def test_an_interrupt_during_an_in_place_write_puts_the_old_text_back(tmp_path, monkeypatch):
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_bytes(b"old\n")
    os.link(a, b)

    def chunks():
        yield b"new"
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        replace_atomically(str(a), chunks())
    assert a.read_bytes() == b"old\n" and _names(tmp_path) == ["a.py", "b.py"]


def test_a_symbolic_link_is_written_through_and_stays_a_link(tmp_path):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "t.json"
    target.write_bytes(b"old\n")
    os.chmod(target, 0o604)
    link = tmp_path / "link.json"
    os.symlink("real/t.json", link)
    replace_atomically(str(link), [b"new\n"])
    assert os.path.islink(link) and os.readlink(link) == "real/t.json"
    assert target.read_bytes() == b"new\n"
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o604
    assert _names(tmp_path) == ["link.json", "real"] and _names(target.parent) == ["t.json"]
    dangling = tmp_path / "dangling"
    os.symlink("real/new.json", dangling)
    replace_atomically(str(dangling), [b"x"])
    assert os.path.islink(dangling) and (tmp_path / "real" / "new.json").read_bytes() == b"x"


@pytest.mark.parametrize("mode", [0o600, 0o644, 0o750, 0o4755, 0o2755])
def test_the_mode_is_kept(tmp_path, mode):
    p = tmp_path / "x.py"
    p.write_bytes(b"old\n")
    os.chmod(p, mode)
    replace_atomically(str(p), [b"new\n"])
    assert stat.S_IMODE(os.stat(p).st_mode) == mode and p.read_bytes() == b"new\n"


def test_the_group_is_kept_in_a_setgid_folder(tmp_path):
    groups = sorted(set(os.getgroups()) | {os.getgid()})
    d = tmp_path / "shared"
    d.mkdir()
    p = d / "x.py"
    p.write_bytes(b"old\n")
    if os.geteuid() == 0:
        dir_gid, file_gid = 12345, 23456
    elif len(groups) >= 2:
        dir_gid, file_gid = groups[0], groups[1]
    else:
        pytest.skip("needs root or two groups")
    os.chown(d, -1, dir_gid)
    os.chmod(d, 0o2775)
    os.chown(p, -1, file_gid)
    replace_atomically(str(p), [b"new\n"])
    assert os.stat(p).st_gid == file_gid and p.read_bytes() == b"new\n"


def test_extended_attributes_are_kept(tmp_path):
    p = tmp_path / "x.py"
    p.write_bytes(b"old\n")
    try:
        os.setxattr(p, "user.anydev-test", b"kept")
    except OSError:
        pytest.skip("this file system has no user.* extended attributes")
    replace_atomically(str(p), [b"new\n"])
    assert os.getxattr(p, "user.anydev-test") == b"kept" and p.read_bytes() == b"new\n"


_AS_NOBODY = textwrap.dedent("""
    import importlib.util, sys
    spec = importlib.util.spec_from_file_location("f", sys.argv[1])
    f = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(f)
    try:
        f.replace_atomically(sys.argv[2], [b"new\\n"])
    except PermissionError as e:
        print("refused:", e)
""")


def _world_readable(path):
    """Whether every folder above ``path``'s real file lets others in."""
    d = os.path.realpath(path)
    while d != os.path.dirname(d):
        d = os.path.dirname(d)
        if not os.stat(d).st_mode & stat.S_IXOTH:
            return False
    return True


def test_a_read_only_file_is_refused_and_left_alone(tmp_path):
    d = tmp_path / "open"
    d.mkdir()
    os.chmod(d, 0o777)  # the folder is writable: a rename would replace the file
    p = d / "ro.py"
    p.write_bytes(b"old\n")
    os.chmod(p, 0o444)
    if os.geteuid() != 0:
        with pytest.raises(PermissionError, match="no write permission"):
            replace_atomically(str(p), [b"new\n"])
    else:  # root may write anything, as ruff and black do; a user may not
        python = next((p for p in (sys.executable, "/usr/bin/python3")
                       if os.access(os.path.realpath(p), os.X_OK) and _world_readable(p)), None)
        if python is None:
            pytest.skip("no Python that user nobody may run")
        import tempfile

        d = tempfile.mkdtemp()  # tmp_path's parents are root's own (0700)
        os.chmod(d, 0o777)
        p = os.path.join(d, "ro.py")
        with open(p, "wb") as f:
            f.write(b"old\n")
        os.chmod(p, 0o444)
        os.chown(p, 65534, 65534)
        r = subprocess.run([python, "-c", _AS_NOBODY, _files.__file__, str(p)],
                           capture_output=True, text=True, user=65534, group=65534,
                           extra_groups=[], cwd=d)
        try:
            assert ("refused: [Errno 13] Permission denied (no write permission on the file)"
                    in r.stdout), r
            assert open(p, "rb").read() == b"old\n" and os.listdir(d) == ["ro.py"]
            replace_atomically(p, [b"root's\n"])
            assert open(p, "rb").read() == b"root's\n"
            assert stat.S_IMODE(os.stat(p).st_mode) == 0o444 and os.stat(p).st_uid == 65534
        finally:
            import shutil

            shutil.rmtree(d)
        return
    assert p.read_bytes() == b"old\n" and _names(d) == ["ro.py"]


def test_scan_output_to_a_hard_link_keeps_the_link(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    (tmp_path / "out.json").write_text("old\n")
    os.link(tmp_path / "out.json", tmp_path / "other.json")
    rc, _, err = run_cli("scan", "x.py", "--output-format", "json", "-o", "out.json")
    assert rc == 1, err
    assert (tmp_path / "other.json").read_text() == (tmp_path / "out.json").read_text()
    assert "AD" in (tmp_path / "out.json").read_text()
    assert os.stat(tmp_path / "out.json").st_nlink == 2


def test_what_is_not_a_regular_file_is_written_to_not_renamed_over(tmp_path):
    # As root, `anydev report merge x.json -o /dev/null` renamed a temporary
    # file over /dev/null (and -o /dev/full "succeeded" the same way).
    import threading

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
    reader.start()
    replace_atomically(str(fifo), [b"through ", b"the pipe\n"])
    reader.join(10)
    assert got == [b"through the pipe\n"] and stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert _names(tmp_path) == ["fifo"]
    (tmp_path / "dir").mkdir()
    with pytest.raises(IsADirectoryError):
        replace_atomically(str(tmp_path / "dir"), [b"x"])
    assert _names(tmp_path) == ["dir", "fifo"] and _names(tmp_path / "dir") == []
    if os.path.exists("/dev/full"):
        with pytest.raises(OSError, match="No space left on device"):
            replace_atomically("/dev/full", [b"x" * 10])
        assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_report_merge_to_a_device_writes_to_it(tmp_path):
    # the whole command, against a character device that is not /dev/null
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    report = tmp_path / "r.json"
    report.write_text('{"format": "anydev-report", "version": 1, "processes": [], '
                      '"calls": []}\n')
    rc, _, err = run_cli("report", "merge", str(report), "-o", "/dev/full")
    assert rc == 2 and "No space left on device" in err, err
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


# --- issue 30: links another user planted, temporary files left behind ---------------


def _planted(tmp_path, owner: int = 65534):
    """A sticky world-writable folder (as /tmp) holding a link owned by
    ``owner`` to a root-only file in a 0700 folder; (link, target)."""
    if os.geteuid() != 0:
        pytest.skip("planting another user's link needs root (lchown)")
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    target = private / "secret"
    target.write_bytes(b"root's own\n")
    os.chmod(target, 0o600)
    link = shared / "report.json"
    os.symlink(target, link)
    os.lchown(link, owner, owner)
    return link, target


def test_a_link_another_user_planted_is_not_written_through(tmp_path):
    # Note [Links another user planted]: the link's target, a root-only file
    # in a 0700 folder, was replaced.
    link, target = _planted(tmp_path)
    with pytest.raises(_files.UntrustedLinkError, match="belongs to .*uid 65534"):
        replace_atomically(str(link), [b"x\n"])
    assert target.read_bytes() == b"root's own\n" and os.path.islink(link)
    assert sorted(os.listdir(link.parent)) == ["report.json"]


def test_scan_output_and_the_runtime_report_refuse_a_planted_link(tmp_path, monkeypatch):
    link, target = _planted(tmp_path)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    rc, _, err = run_cli("scan", "x.py", "-o", str(link))
    assert rc == 2 and "symbolic link that another user could have placed" in err, err
    import anydev.report

    with pytest.raises(OSError, match="another user could have placed"):
        anydev.report.write(str(link))
    assert target.read_bytes() == b"root's own\n"


def test_links_of_the_user_or_root_are_still_written_through(tmp_path):
    link, target = _planted(tmp_path, owner=os.geteuid())
    replace_atomically(str(link), [b"mine\n"])
    assert target.read_bytes() == b"mine\n" and os.path.islink(link)
    # a chain: each link is checked, the first trusted and the second planted
    second = tmp_path / "shared" / "second"
    os.symlink(link, second)
    os.lchown(link, 65534, 65534)
    with pytest.raises(_files.UntrustedLinkError):
        replace_atomically(str(second), [b"x\n"])
    assert target.read_bytes() == b"mine\n"


def test_a_fifo_is_not_opened_as_an_input(tmp_path):
    fifo = tmp_path / "in.json"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match=r"not a regular file \(a FIFO\)"):
        _files.open_input(str(fifo))  # did not return: open() waited for a writer
    r, w = os.pipe()
    os.write(w, b"{}")
    os.close(w)
    with _files.open_input(f"/dev/fd/{r}") as f:  # `<(zcat ...)`: a pipe the shell passes
        assert f.read() == b"{}"
    os.close(r)


def test_stale_temporary_files_of_a_stopped_run_are_removed_and_live_ones_kept(tmp_path):
    import time

    dead = 2 ** 22 + 17  # above pid_max's default: no such process
    while True:
        try:
            os.kill(dead, 0)
            dead += 1
        except ProcessLookupError:
            break
        except PermissionError:
            dead += 1
    stale = tmp_path / f".anydev-fix-{dead}-0123456789ab.tmp"
    live = tmp_path / f".anydev-fix-{os.getppid()}-0123456789ab.tmp"
    old_live = tmp_path / f".anydev-fix-{os.getppid()}-ba9876543210.tmp"
    copy = tmp_path / f".anydev-fix-{dead}-0123456789ab.old"  # an in-place write's backup
    other = tmp_path / ".anydev-fix-notours.tmp"
    for p in (stale, live, old_live, copy, other):
        p.write_bytes(b"x")
    day = time.time() - 2 * 24 * 3600
    os.utime(old_live, (day, day))
    removed = _files.remove_stale_temps(str(tmp_path), ".anydev-fix-")
    assert sorted(removed) == sorted([str(stale), str(old_live)])
    assert _names(tmp_path) == sorted(p.name for p in (live, copy, other))


_STOPPED_MID_WRITE = r"""
import os, signal, sys, time
from anydev._cli import main

real = os.replace
def replace(a, b):
    os.kill(os.getpid(), signal.SIGTERM)  # what `timeout` sends, while a file is being written
    time.sleep(30)
    real(a, b)
os.replace = replace
sys.exit(main.main(["fix", "--target-torch", "2.13", sys.argv[1]]))
"""


def test_fix_stopped_by_sigterm_leaves_no_temporary_files(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    for i in range(3):
        (tree / f"m{i}.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    p = subprocess.run([sys.executable, "-c", _STOPPED_MID_WRITE, str(tree)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == -15, p.stderr  # it still dies of the signal
    assert _names(tree) == ["m0.py", "m1.py", "m2.py"], p.stderr  # 1 to 3 .tmp files were left
    for i in range(3):  # each file old or new, never part of one
        assert (tree / f"m{i}.py").read_text() in (
            "import torch\ntorch.cuda.synchronize()\n",
            "import torch\ntorch.accelerator.synchronize()\n")


def test_fix_removes_what_a_killed_run_left_and_says_so(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    left = tmp_path / ".anydev-fix-4194321-00112233aabb.tmp"
    while True:  # a pid no process has
        try:
            os.kill(int(left.name.split("-")[2]), 0)
        except ProcessLookupError:
            break
        left = tmp_path / f".anydev-fix-{int(left.name.split('-')[2]) + 1}-00112233aabb.tmp"
    left.write_text("import torch\n")
    rc, _, err = run_cli("fix", "--target-torch", "2.13", "m.py")
    assert rc == 0, err
    assert f"removed {left.name}" in err and "a temporary file a stopped run left" in err
    assert _names(tmp_path) == ["m.py"]


def test_a_temporary_file_is_registered_before_it_exists_and_none_after_a_stop(tmp_path,
                                                                              monkeypatch):
    # the race of overlapping writes and a stop signal: a thread's temporary file made
    # after the handler looked at the live set was left behind (Note [Temporary files
    # left behind])
    from anydev._common import files as _files

    seen = []
    real_open = os.open

    def spying_open(name, *a, **k):
        seen.append(name in _files._live_temps)
        return real_open(name, *a, **k)

    monkeypatch.setattr(os, "open", spying_open)
    fd, name = _files._temp(str(tmp_path / "m.py"), ".anydev-fix-", live=True)
    os.close(fd)
    assert seen == [True] and name in _files._live_temps
    _files._live_temps.discard(name)
    # the handler (without ending this process): the live file goes, none is made after
    fd, other = _files._temp(str(tmp_path / "n.py"), ".anydev-fix-", live=True)
    os.close(fd)
    monkeypatch.setattr(os, "kill", lambda *a: None)
    import signal
    monkeypatch.setattr(signal, "signal", lambda *a: None)
    monkeypatch.setattr(signal, "pthread_sigmask", lambda *a: None)
    monkeypatch.setattr(_files, "_stopping", False)
    _files._stop_signal_handler(signal.SIGTERM, None)
    assert not os.path.exists(other)
    with pytest.raises(InterruptedError):
        _files._temp(str(tmp_path / "m.py"), ".anydev-fix-", live=True)
    assert _names(tmp_path) == [name.rsplit("/", 1)[1]]  # only the unregistered one
    _files._live_temps.clear()
