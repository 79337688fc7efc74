"""Inputs from elsewhere end in a clear error, in bounded time and memory
(issue 30): a named FIFO given as a report or a baseline, a baseline with a
number or a nesting no baseline has, a report with a long string."""

from __future__ import annotations

import json
import os
import sys
import textwrap

import pytest

from conftest import run_command


def _anydev(*argv: str, cwd=None, timeout: float = 60):
    import subprocess

    p = subprocess.run([sys.executable, "-m", "anydev", *argv], capture_output=True, text=True,
                       timeout=timeout, cwd=cwd)
    return p.returncode, p.stdout, p.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")
@pytest.mark.parametrize("argv", [("report", "show", "{fifo}"),
                                  ("report", "merge", "{fifo}", "-o", "{out}"),
                                  ("scan", "x.py", "--baseline", "{fifo}")])
def test_a_named_fifo_is_refused_not_waited_on(tmp_path, argv):
    # open() of a FIFO without a writer waits for one: these blocked for good.
    fifo = tmp_path / "in.json"
    os.mkfifo(fifo)
    (tmp_path / "x.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    argv = [a.format(fifo=fifo, out=tmp_path / "m.json") for a in argv]
    rc, _, err = _anydev(*argv, cwd=tmp_path, timeout=60)
    assert rc == 2, err
    assert "not a regular file (a FIFO)" in err and str(fifo) in err, err


@pytest.mark.parametrize("findings,what", [
    ('[{"path": "x.py", "rule": "AD107", "symbol": "s", "line_hash": "h", "occurrence": 1e400}]',
     "the number 1e400 is too large"),
    ('[{"path": "x.py", "rule": "AD107", "symbol": "s", "line_hash": "h", "occurrence": 1.5}]',
     "a whole occurrence"),
    ("[" * 100_000 + "]" * 100_000, "nested 100001 levels deep"),
    ('[{"path": "x.py", "rule": "AD107", "symbol": "s", "line_hash": "h", "occurrence": '
     + "9" * 5000 + "}]", "an integer of 5000 digits"),
])
def test_a_baseline_past_what_a_baseline_holds_is_a_usage_error(tmp_path, findings, what):
    # 1e400 ended in an OverflowError traceback, 100,000 levels in a
    # RecursionError one, both with exit 1.
    (tmp_path / "x.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    (tmp_path / "base.json").write_text('{"version": 1, "findings": ' + findings + "}")
    rc, _, err = _anydev("scan", "x.py", "--baseline", "base.json", cwd=tmp_path)
    assert rc == 2, err
    assert "Traceback" not in err and "base.json: " in err and what in err, err


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="no /proc")
def test_report_show_reads_a_long_string_in_bounded_memory_and_linear_time(tmp_path):
    # The depth check's regular expression kept a backtracking entry per
    # character of a string: about 125 bytes per byte (a 25 MB field: 3.2 GB).
    size = 8_000_000
    report = {"format": "anydev-report", "version": 1,
              "processes": [{"id": "p", "argv": ["x" * size]}], "calls": []}
    path = tmp_path / "r.json"
    path.write_text(json.dumps(report))
    code = textwrap.dedent(f"""
        import sys, time
        from anydev._cli import main
        start = time.process_time()
        rc = main.main(["report", "show", {str(path)!r}])
        # VmHWM: this process's own peak (ru_maxrss keeps the forking parent's across exec)
        hwm = [int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:")]
        print("MEASURED", rc, hwm[0] // 1024, time.process_time() - start, file=sys.stderr)
    """)
    rc, _, err = run_command([sys.executable, "-c", code], timeout=300)
    assert rc == 0, err
    measured = [line.split()[1:] for line in err.splitlines() if line.startswith("MEASURED ")]
    assert len(measured) == 1, err
    status, peak_mib, seconds = measured[0]
    assert status == "0"
    # the file (8 MB), its text and the parsed string: about 40 MiB; it was over 900
    assert int(peak_mib) < 250, err
    assert float(seconds) < 30, err


def test_a_folder_past_path_max_is_an_error_not_a_silent_skip(tmp_path):
    # A file whose walked path is longer than about 4,096 bytes was skipped
    # without a word: "0 files scanned", exit 0.
    fd = os.open(tmp_path, os.O_RDONLY)
    os.mkdir("d", dir_fd=fd)
    fd2 = os.open("d", os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    fd = fd2
    for _ in range(25):  # 25 x 201 bytes: past PATH_MAX
        os.mkdir("x" * 200, dir_fd=fd)
        nxt = os.open("x" * 200, os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = nxt
    leaf = os.open("m.py", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
    os.write(leaf, b"import torch\ntorch.cuda.synchronize()\n")
    os.close(leaf)
    os.close(fd)
    rc, out, err = _anydev("scan", "d", cwd=tmp_path)
    assert rc == 2, (out, err)
    assert "cannot read: File name too long" in err, err
