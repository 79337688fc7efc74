"""The native report of a tree's scan (Note [Native reports] in
python/src/bind_scan.cc): `anydev scan` writes its text, JSON and GitHub
reports from the native findings, and they must be, byte for byte, what the
same renderers write from the Finding objects (the route scan_paths, SARIF,
baselines and statistics take), with `# noqa`, per-file-ignores, several
paths, file names that are not UTF-8 and errors in the tree."""

from __future__ import annotations

import json
import os
import sys
import time

import pytest

from anydev._cli import scan as _scan_cli
from anydev._migrate import formats as _scan_formats
from anydev import scan
from anydev._migrate import torch_versions as _versions

from conftest import run_cli

PY = (b"import torch\n"
      b"import torch.cuda as tc\n"
      b"torch.cuda.synchronize()\n"
      b"x = torch.cuda.current_device()  # noqa\n"
      b"y = tc.device_count()  # noqa: AD9\n"
      b"z = tc.device_count()  # noqa: AD1\n"
      b"t = torch.zeros(3, device=\"cuda\")\n"
      b"s = \"caf\xc3\xa9 \\n \\\" %, :\"; torch.cuda.empty_cache()\n"
      b"from torch.cuda import device_count, synchronize as sync\n")
CU = (b"#include <c10/cuda/CUDAStream.h>\n"
      b"void f() { auto s = c10::cuda::getCurrentCUDAStream();\n"
      b"  c10::cuda::device_synchronize(); }\n")


@pytest.fixture(name="tree")
def tree_fixture(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub" / "deep").mkdir(parents=True)
    (tmp_path / "a.py").write_bytes(PY)
    (tmp_path / "b.cu").write_bytes(CU)
    (tmp_path / "sub" / "c.py").write_bytes(PY.replace(b"  # noqa", b""))
    (tmp_path / "sub" / "deep" / "d.cc").write_bytes(CU)
    (tmp_path / "sub" / "bad.py").write_bytes(b"import torch\ntorch.cuda.synchronize()\n\xff\n")
    (tmp_path / "sub" / "clean.py").write_bytes(b"print(1)\n")
    (tmp_path / "sub" / "odd, na:me %25 \"q\".py").write_bytes(PY)  # escaped in JSON, GitHub
    if sys.platform == "linux":  # a name that is not UTF-8 (Note [File names])
        (tmp_path / os.fsdecode(b"caf\xe9.py")).write_bytes(PY)
    return tmp_path


def _text(chunks) -> str:
    """A report's chunks (str, or UTF-8 bytes from the native renderer) as one str."""
    return "".join(c.decode("utf-8") if isinstance(c, bytes) else c for c in chunks)


def _renders(found) -> dict:
    """Every report the native route serves, of `found` (a _Report or its Findings)."""
    return {
        "text": _text(_scan_cli.render_text(found, [], 7)),
        "colour": _text(_scan_cli.render_text(found, [], 7, colour=True)),
        "quiet": _text(_scan_cli.render_text(found, [], 7, summary=False)),
        "json": _text(_scan_formats.render_json(found, [])),
        "github": _text(_scan_formats.render_github(found, [])),
    }


def _check_same(report) -> None:
    native = _renders(report)
    objects = _renders(list(report.findings))
    for name in native:
        assert native[name] == objects[name], name


@pytest.mark.parametrize("paths", [
    ["."],
    ["sub", "a.py"],
    ["sub/deep/d.cc", "sub", "a.py", "./sub/c.py", "b.cu"],  # mixed, and a file twice
])
def test_native_reports_are_those_of_the_findings(tree, paths):
    report = scan._scan_report(paths, jobs=2)
    assert len(report) == len(report.findings) > 0
    _check_same(report)
    # The order is that of the Findings sorted by (path, start), as before.
    fs = report.findings
    if len(paths) > 1:
        assert fs == sorted(fs, key=lambda f: (f.path, f.start))


def test_noqa_and_per_file_ignores_drop_natively(tree):
    report = scan._scan_report(["."], jobs=1)
    lines = {(f.path, f.line) for f in report.findings}
    assert ("a.py", 3) in lines and ("sub/c.py", 4) in lines
    assert ("a.py", 4) not in lines  # a bare `# noqa`
    assert ("a.py", 5) in lines  # `# noqa: AD9` is for other rules
    assert ("a.py", 6) not in lines  # `# noqa: AD1`
    before = list(report.findings)
    report.drop_where(lambda path, code: path.startswith("sub/") and code.startswith("AD1"))
    after = report.findings
    assert after == [f for f in before if not (f.path.startswith("sub/")
                                               and f.rule.startswith("AD1"))]
    assert len(report) == len(after) < len(before)
    _check_same(report)
    report.drop_where(lambda path, code: True)
    assert len(report) == 0 and report.findings == []
    _check_same(report)
    assert _text(_scan_formats.render_json(report, [])).startswith(
        '{"version": 1,\n "findings": [],')


def test_scan_paths_is_each_file_scan_source(tree):
    """The public API still returns the Findings of scan_source, file by file."""
    result = scan.scan_paths(["."], jobs=2)
    want = []
    paths = sorted({f.path for f in result.findings if not f.path.startswith('"')})
    assert len(paths) == 6  # sub/bad.py: the findings before its bad byte
    for path in paths:
        with open(path, "rb") as fh:
            want += scan.scan_source(fh.read(), path)[0]
    assert [f for f in result.findings if f.path in paths] == want
    assert [e.path for e in result.errors] == ["sub/bad.py"]
    assert all(type(f) is scan.Finding for f in result.findings)


@pytest.mark.parametrize("fmt", ["text", "json", "github"])
def test_cli_reports_are_those_of_the_findings(tree, fmt):
    """`anydev scan` (native route) against the renderers given the Findings,
    errors included, with per-file-ignores from a configuration."""
    (tree / "pyproject.toml").write_text(
        '[tool.anydev]\nper-file-ignores = { "sub/deep/**" = ["AD2"], "b.cu" = [] }\n')
    rc, out, err = run_cli("scan", "--format", fmt, ".")
    sel = _scan_cli.selection(_cli_args(["."]))
    result = _scan_cli.scan_selection(sel, None)
    if fmt == "text":  # marked at the run's target (Note [Marks of the fixer])
        want = _text(_scan_cli.render_text(result.findings, result.errors, result.files,
                                           levels=_scan_cli.RowLevels(sel.run_target())))
        assert "Target torch: 1.13, from the default" in want
    elif fmt == "json":
        want = _text(_scan_formats.render_json(result.findings, result.errors))
        assert json.loads(out)["findings"]
    else:
        want = _text(_scan_formats.render_github(result.findings, result.errors))
    assert out == want
    assert rc == 1
    assert not any(f.path == "b.cu" for f in result.findings)


def _cli_args(paths):
    from anydev._cli.main import _fast_scan_args

    return _fast_scan_args(paths)


def test_report_checks_its_arguments(tree):
    report = scan._scan_report(["."], jobs=1)
    native = report.native
    with pytest.raises(IndexError):
        native.tuples(len(native.files()))
    with pytest.raises(IndexError):
        native.drop(0, [10**6])
    with pytest.raises(ValueError):
        native.order([0])
    with pytest.raises(ValueError):
        scan._native().Renderer(native, [9], [None] * len(native.files()), [], "")


def test_native_findings_are_those_python_builds(tree, monkeypatch):
    """Note [Native Findings]: the Findings the native side makes are those
    _finding makes of the tuples, frozen and hashable as ever."""
    report = scan._scan_report(["sub", "a.py", "."], jobs=1)
    native = report.findings
    monkeypatch.setitem(scan._state, "native findings", False)
    again = scan._scan_report(["sub", "a.py", "."], jobs=1)
    built = again.findings
    assert native == built and len(native) > 10
    for a, b in zip(native, built):
        assert type(a) is type(b) is scan.Finding
        assert [type(getattr(a, n)) for n in scan._FIELDS] == \
            [type(getattr(b, n)) for n in scan._FIELDS]
        assert hash(a) == hash(b)
    with pytest.raises(AttributeError):
        native[0].line = 3  # frozen
    import gc

    assert not any(gc.is_tracked(f) for f in native)  # atomic fields: untracked
    assert {f.kind for f in native} >= {"call", "import", "literal"}
    # A class that is not all slots is refused, not written into.

    class NotSlots:
        pass

    with pytest.raises(TypeError):
        report.native.findings(NotSlots, report.shown, [], list(scan._native().KINDS))


@pytest.mark.parametrize("encoding", ["utf-8", "latin-1"])
def test_bytes_chunks_reach_a_text_stream_as_its_str_would(encoding):
    """The native renderer's chunks are UTF-8 bytes: a UTF-8 stream gets them
    on its buffer, in order with the str chunks around them; another stream
    gets them decoded and encoded as it encodes the str, a character it
    lacks as a backslash escape; a machine format (utf8) is UTF-8 on any."""
    import io

    buf = io.BytesIO()
    out = io.TextIOWrapper(buf, encoding=encoding, write_through=False)
    out.write("head\n")
    _scan_cli._write_text(out, ["a\n", b"b: caf\xc3\xa9\n", "c\n", b"d\n", "e"])
    assert buf.getvalue() == "head\na\nb: café\nc\nd\ne".encode(encoding)
    plain = io.StringIO()  # no buffer at all (redirect_stdout)
    _scan_cli._write_text(plain, [b"x\xc3\xa9", "y"])
    assert plain.getvalue() == "xéy"
    raw = io.BytesIO()
    ascii_out = io.TextIOWrapper(raw, encoding="ascii")
    _scan_cli._write_text(ascii_out, [b"caf\xc3\xa9 ", "\u2192"])  # was a UnicodeEncodeError
    assert raw.getvalue() == b"caf\\xe9 \\u2192"
    raw = io.BytesIO()
    latin1_out = io.TextIOWrapper(raw, encoding="latin-1")
    _scan_cli._write_text(latin1_out, [b"caf\xc3\xa9 ", "\u2192"], utf8=True)
    assert raw.getvalue() == "café →".encode("utf-8")


def test_write_atomic_takes_bytes_chunks(tmp_path):
    target = tmp_path / "r.json"
    _scan_cli.write_atomic(str(target), ["a", b"\xc3\xa9", "b"])
    assert target.read_bytes() == "aéb".encode()
    _scan_cli.write_atomic(os.devnull, ["a", b"b"])  # a device: written, not replaced


def test_sarif_results_are_what_dumps_makes_of_them(tree):
    """render_sarif writes each result from cached fragments: each line must
    be what json's encoder makes of the result's dict, and the fingerprints
    those of fingerprint_keys."""
    findings = scan.scan_paths(["."], jobs=1).findings
    text = _text(_scan_formats.render_sarif(findings, [], lambda code: True, version="0"))
    doc = json.loads(text)
    results = doc["runs"][0]["results"]
    assert len(results) == len(findings)
    dumps = json.JSONEncoder(ensure_ascii=False).encode
    lines = [line.strip().rstrip(",") for line in text.splitlines()
             if line.startswith('    {"ruleId"')]
    assert lines == [dumps(r) for r in results]
    keys = _scan_formats.fingerprint_keys(findings)
    for f, r, k in zip(findings, results, keys):
        assert r["ruleId"] == f.rule and r["message"]["text"] == f.message
        region = r["locations"][0]["physicalLocation"]["region"]
        assert (region["startLine"], region["startColumn"], region["endLine"],
                region["endColumn"]) == (f.line, f.column, f.end_line, f.end_column)
        assert r["partialFingerprints"]["anydevFingerprint/v1"] == _scan_formats._fingerprint(k)
        assert r["properties"] == {"symbol": f.symbol, "replacement": f.replacement,
                                   "fix": f.fix}
    # The source lines read for the fingerprints: one file held at a time,
    # the same line text as reading each file whole.
    lines_of = _scan_cli._Lines()
    for f in findings + findings[:3]:
        try:
            with open(f.path, "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        b = data.rfind(b"\n", 0, f.start) + 1
        e = data.find(b"\n", f.start)
        assert lines_of.text(f) == data[b:e if e >= 0 else len(data)].decode(
            "utf-8", "replace").strip()


def test_iter_scan_paths_batches_are_native_reports(tree):
    """iter_scan_paths makes each batch's Findings natively: the same in any
    batch size, the path errors first, the files and bytes summed."""
    one = list(scan.iter_scan_paths(["missing.py", "."], batch=1000, jobs=1))
    small = list(scan.iter_scan_paths(["missing.py", "."], batch=2, jobs=1))
    assert len(one) == 1 and len(small) > 3
    flat = [f for part in small for f in part.findings]
    assert flat == one[0].findings and all(type(f) is scan.Finding for f in flat)
    assert [e for part in small for e in part.errors] == one[0].errors
    assert one[0].errors[0].path == "missing.py"
    assert sum(p.files for p in small) == one[0].files
    assert sum(p.bytes for p in small) == one[0].bytes


def test_git_is_asked_only_where_it_could_find_a_work_tree(tmp_path, monkeypatch):
    """_tracked_ignored skips git (and the import of subprocess) where no
    .git is in or above the folder, by its path or its real path."""
    monkeypatch.delenv("GIT_DIR", raising=False)
    monkeypatch.delenv("GIT_WORK_TREE", raising=False)
    plain = tmp_path / "plain" / "deep"
    plain.mkdir(parents=True)
    if scan._maybe_in_work_tree(str(tmp_path)):
        pytest.skip("the temporary folder is inside a git work tree")
    assert not scan._maybe_in_work_tree(str(plain))
    repo = tmp_path / "repo"
    (repo / "src" / "a").mkdir(parents=True)
    (repo / ".git").mkdir()
    assert scan._maybe_in_work_tree(str(repo / "src" / "a"))
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (worktree / ".git").write_text("gitdir: ../repo/.git\n")  # a worktree's .git file
    assert scan._maybe_in_work_tree(str(worktree))
    (tmp_path / "link").symlink_to(repo / "src")  # git looks from the real path
    assert scan._maybe_in_work_tree(str(tmp_path / "link"))
    monkeypatch.setenv("GIT_DIR", str(repo / ".git"))
    assert scan._maybe_in_work_tree(str(plain))


# --- streamed reports (Note [Streamed reports] in anydev/scan.py) -----------------------


@pytest.fixture(name="small_batches")
def small_batches_fixture(monkeypatch):
    """Batches of one or two files, so that a small tree's stream has many."""
    monkeypatch.setattr(scan, "_STREAM_FILES", (1, 1, 2))
    monkeypatch.setattr(scan, "_STREAM_FINDINGS", 1)


_STREAM_RENDERS = {
    "text": lambda f: _scan_cli.render_text(f, f.errors, f.files),
    "colour": lambda f: _scan_cli.render_text(f, f.errors, f.files, colour=True),
    "quiet": lambda f: _scan_cli.render_text(f, f.errors, f.files, summary=False),
    "json": lambda f: _scan_formats.render_json(f, f.errors),
    "github": lambda f: _scan_formats.render_github(f, f.errors),
}


@pytest.mark.parametrize("paths", [
    ["."],
    ["sub", "a.py"],
    ["sub/deep/d.cc", "sub", "a.py", "./sub/c.py", "b.cu", "sub/notes.txt"],  # a file twice,
    ["sub/notes.txt"],  # a path that is no source; a stream of no batch at all
])
@pytest.mark.parametrize("dropping", [False, True])
def test_streamed_reports_are_those_of_the_whole_tree(tree, small_batches, paths, dropping):
    """Every streamed report, written a batch at a time, is byte for byte the
    report of the whole tree's _Report, with its errors, counts and summary."""
    (tree / "sub" / "notes.txt").write_text("torch.cuda.synchronize()\n")
    drop = (lambda path, code: path.startswith("sub/") and code.startswith("AD1")) \
        if dropping else None

    def whole():
        report = scan._scan_report(paths, jobs=1)
        if drop:
            report.drop_where(drop)
        return report

    batches = []
    for name, render in _STREAM_RENDERS.items():
        stream = scan._scan_stream(paths, keep=scan.rule_filter(), jobs=1, drop=drop)
        real = stream.batches
        stream.batches = lambda real=real: (batches.append(b) or b for b in real())
        want = whole()
        assert _text(render(stream)) == _text(render(want)), name
        assert stream.errors == want.errors and stream.files == want.files
        assert len(stream) == len(want) and stream.summary_counts() == want.summary_counts()
        assert stream.bytes == want.bytes
    if paths != ["sub/notes.txt"]:
        assert len(batches) > 3 * len(_STREAM_RENDERS)  # many batches, not one
    stream = scan._scan_stream(paths, keep=scan.rule_filter())
    for _batch in stream.batches():  # the walk's errors are known when it has ended
        pass
    assert [e for e in stream.errors if e.path == "sub/notes.txt"] == (
        [scan.ScanError("sub/notes.txt", "not a Python or C/C++/CUDA/HIP source (by its "
                        "extension); skipped", None)] if "sub/notes.txt" in paths else [])


@pytest.mark.parametrize("render", sorted(_STREAM_RENDERS))
def test_a_stream_holds_one_batch_at_a_time(tree, small_batches, monkeypatch, render):
    """The renderers let each batch go before the next is scanned: what keeps
    the memory of `anydev scan` flat as the findings grow."""
    import weakref

    live: weakref.WeakSet = weakref.WeakSet()
    before = []  # per batch, how many were alive when it was made
    init = scan._Report.__init__

    def tracked(self, *args):
        before.append(len(live))
        init(self, *args)
        live.add(self)

    monkeypatch.setattr(scan._Report, "__init__", tracked)
    stream = scan._scan_stream(["."], keep=scan.rule_filter(), jobs=1)
    most = 0
    for _chunk in _STREAM_RENDERS[render](stream):
        most = max(most, len(live))
    assert len(before) > 3 and set(before) == {0} and most == 1
    with pytest.raises(RuntimeError):  # a stream is scanned once
        list(stream.batches())


def _queue(names, lo=1, first=1, hi=2, findings=1):
    rules, _rows = scan._scan_rules(scan.rule_filter())
    return scan._native().ScanQueue(rules, [os.fsencode(n) for n in names], 1, 20 << 20, [],
                                    lo, first, hi, findings)


def _drain(queue):
    batches = []
    while (batch := queue.next()) is not None:
        batches.append(batch)
    return batches


def test_the_scan_ahead_queue_gives_the_batches_of_one_scan_in_order(tmp_path):
    """Note [Scan ahead]: the batches a ScanQueue scans on its own thread are
    those of one scan of all the files, in their order, sized as _Stream
    sized them (the next by the last one's findings, within the bounds)."""
    names = []
    for i in range(40):
        name = tmp_path / f"m{i:02}.py"
        name.write_bytes(b"import torch\n" + b"torch.cuda.synchronize()\n" * (i % 5))
        names.append(str(name))
    names.append(str(tmp_path / "gone.py"))  # vanished since the walk: an error, in its place
    rules, _rows = scan._scan_rules(scan.rule_filter())
    whole, nfiles, nbytes = scan._native().scan_files_report(rules, [os.fsencode(n) for n in names],
                                                               1, 20 << 20, [])
    batches = _drain(_queue(names, lo=2, first=3, hi=8, findings=6))
    assert sum(b[1] for b in batches) == nfiles == 40
    assert sum(b[2] for b in batches) == nbytes
    files = [f for b in batches for f in b[0].files()]
    assert [f[0] for f in files] == [f[0] for f in whole.files()]
    assert [f[2] for f in files] == [f[2] for f in whole.files()]
    assert files[-1][0] == os.fsencode(names[-1]) and files[-1][3]  # its error
    per_file = {f[0]: f[2] for f in whole.files()}
    sizes, size, at = [], 3, 0  # _Stream's rule, batch by batch
    while at < len(names):
        part = names[at:at + size]
        at += len(part)
        sizes.append(len(part))
        found = sum(per_file.get(os.fsencode(n), 0) for n in part)
        if found * 2 < 6:
            size = min(8, size * 2)
        elif found > 6:
            size = max(2, size * 6 // found)
    assert [b[1] + len(b[0].files()) - sum(1 for f in b[0].files() if not f[3])
            for b in batches] == sizes


def test_a_scan_ahead_queue_left_half_read_ends_without_waiting_for_the_rest(tmp_path):
    """A caller that stops reading (a failed write) drops the queue: it ends
    after the batch it is scanning, and the one it holds, and does not hang."""
    names = []
    for i in range(300):
        (tmp_path / f"m{i}.py").write_bytes(b"import torch\ntorch.cuda.synchronize()\n")
        names.append(str(tmp_path / f"m{i}.py"))
    queue = _queue(names)
    assert queue.next() is not None
    del queue  # joins its thread: one more batch at most is scanned
    empty = _queue([])
    assert empty.next() is None and empty.next() is None


def test_a_walking_queue_scans_what_the_walk_finds_as_walk_files_gives_it(tree):
    """ScanQueue.walking scans the files of a walk as it finds them: the same
    files, in the same order, with the same path errors and ignored count at
    the walk's end, as walk_files and a queue of its names."""
    (tree / ".gitignore").write_text("sub/clean.py\n")
    rules, _rows = scan._scan_rules(scan.rule_filter())
    for paths in ([b"."], [b"sub", b"missing", b"a.py"], [b"sub/deep/d.cc"], [b"missing"]):
        names, path_errors, ignored = scan._native().walk_files(paths, [], True)
        given = _drain(scan._native().ScanQueue(rules, names, 1, 20 << 20, [], 1, 1, 2, 1))
        queue = scan._native().ScanQueue.walking(rules, paths, [], True, 2, 20 << 20, [],
                                                 1, 1, 2, 1)
        walked = _drain(queue)
        assert [f for b in walked for f in b[0].files()] == \
            [f for b in given for f in b[0].files()], paths
        assert [b[1:] for b in walked] == [b[1:] for b in given]
        assert queue.walked() == (path_errors, ignored)
        assert queue.walked() == ([], ignored)  # the errors are given once
    assert ignored == 0 and path_errors[0][3][0][0].startswith("cannot read")


def test_a_walking_queue_dropped_early_stops_its_walk(tmp_path):
    """A walking queue dropped after one batch stops the walk at the next
    file it finds, rather than walking the rest of the tree first."""
    for d in range(60):
        (tmp_path / f"d{d:02}").mkdir()
        for i in range(50):
            (tmp_path / f"d{d:02}" / f"m{i}.py").write_bytes(b"torch.cuda.synchronize()\n")
    rules, _rows = scan._scan_rules(scan.rule_filter())
    queue = scan._native().ScanQueue.walking(rules, [os.fsencode(tmp_path)], [], True, 1,
                                             20 << 20, [], 1, 1, 1, 1)
    assert queue.next()[1] == 1
    del queue  # no hang, no crash: the threads end and are joined


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
@pytest.mark.parametrize("settled", [False, True])
def test_a_scan_ahead_queue_is_refused_in_a_forked_child(tmp_path, settled):
    """A child forked while a queue is alive has no copy of its thread: its
    next() would wait for ever, so it raises, and dropping it does not wait.
    ``settled``: forked once the queue's thread has scanned a batch ahead and
    waits on its condition variable, which the child must not destroy (glibc
    waits there for the parent's waiter, which never leaves in the child)."""
    (tmp_path / "a.py").write_bytes(b"import torch\ntorch.cuda.synchronize()\n")
    queue = _queue([str(tmp_path / "a.py")] * 3)
    if settled:
        time.sleep(0.3)  # three one-line files: scanned ahead long before this ends
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 3
        try:
            queue.next()
        except ValueError as e:
            code = 0 if "forked" in str(e) else 4
        del queue
        os._exit(code)
    deadline = time.monotonic() + 30
    while (done := os.waitpid(pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    if done[0] == 0:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        pytest.fail("the forked child hung dropping the queue")
    assert os.waitstatus_to_exitcode(done[1]) == 0
    assert len(_drain(queue)) == 3


@pytest.mark.parametrize("fmt", ["text", "json", "github"])
@pytest.mark.parametrize("args", [[], ["-q"], ["--statistics"], ["--show-fixes"], ["-j", "1"]])
def test_cli_streamed_reports_are_those_of_the_whole_tree(tree, small_batches, fmt, args):
    """`anydev scan` (streamed, or whole for --statistics and --show-fixes)
    writes what the renderers make of the whole tree's _Report, to stdout and
    to a file, with several paths and a file reached twice."""
    paths = ["sub", "a.py", "./sub/c.py", "b.cu"]
    rc, out, err = run_cli("scan", "--no-config", "--format", fmt, *args, *paths)
    rc2, out2, err2 = run_cli("scan", "--no-config", "--format", fmt, *args, "-o", "r.out",
                              *paths)
    assert rc == rc2 == 1 and out2 == ""
    assert err == err2 or fmt == "github"  # its errors are in the report, and with -o on stderr
    assert (tree / "r.out").read_bytes() == out.encode("utf-8")
    report = scan._scan_report(paths)
    quiet = "-q" in args
    if "--statistics" in args:
        return  # the statistics read the whole tree's Findings, as before
    if "--show-fixes" in args and fmt == "text":
        # `[*]` and the list are what the fixer would rewrite (Note [Marks of the fixer]):
        # here nothing (the tree declares no torch: the oldest release is the target)
        assert " [*] " not in out and "Would fix" not in out
        return
    if fmt == "text":
        want = _text(_scan_cli.render_text(report, report.errors, report.files,
                                           summary=not quiet,
                                           show_fixes="--show-fixes" in args,
                                           levels=_scan_cli.RowLevels(_versions.DEFAULT)))
    elif fmt == "json":
        want = _text(_scan_formats.render_json(report, report.errors))
    else:
        want = _text(_scan_formats.render_github(report, report.errors))
    if fmt == "json" and "--show-fixes" in args:
        # with --show-fixes each finding also has its fix's edits (issue 32)
        import json

        doc = json.loads(out)
        assert all("edits" in f for f in doc["findings"])
        for f in doc["findings"]:
            f.pop("edits")
            f.pop("not_fixed", None)
        assert doc == json.loads(want)
    else:
        assert out == want
    errors = "".join(f"{e.path}{':' + str(e.line) if e.line else ''}: error: {e.message}\n"
                     for e in report.errors)
    assert err2 == errors
    assert err == ("" if fmt == "github" else errors)
    assert report.errors  # sub/bad.py


def test_a_failed_streamed_write_leaves_the_old_file(tree, small_batches, monkeypatch):
    """-o FILE is written as the tree is scanned, through a temporary file: a
    run that fails half way leaves the old report as it was and no temporary
    file."""
    (tree / "r.json").write_text("old\n")
    calls = []
    drop_noqa = scan._Report.drop_noqa

    def fail_later(self):
        calls.append(1)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        drop_noqa(self)

    monkeypatch.setattr(scan._Report, "drop_noqa", fail_later)
    rc, out, err = run_cli("scan", "--no-config", "--format", "json", "-o", "r.json", ".")
    assert rc == 2 and "r.json: cannot write: No space left on device" in err
    assert (tree / "r.json").read_text() == "old\n"
    assert sorted(p.name for p in tree.iterdir() if p.name.endswith(".tmp")) == []
    assert len(calls) == 3


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("fmt", ["text", "json", "github"])
def test_a_streamed_report_to_a_full_stdout_exits_2(tmp_path, fmt):
    """`anydev scan DIR > /dev/full` with a report of many batches: exit 2
    with the reason, no traceback."""
    import subprocess

    for i in range(40):
        (tmp_path / f"m{i:02d}.py").write_bytes(b"import torch\n" +
                                                b"torch.cuda.synchronize()\n" * 300)
    with open("/dev/full", "w") as full:
        p = subprocess.run([sys.executable, "-m", "anydev", "scan", "--no-config", "--format",
                            fmt, str(tmp_path)], stdout=full, stderr=subprocess.PIPE, text=True,
                           timeout=120)
    assert p.returncode == 2, p.stderr
    assert "cannot write the report to stdout: No space left on device" in p.stderr
    assert "Traceback" not in p.stderr and "Exception ignored" not in p.stderr


MEMORY_CHILD = r"""
import os, sys
from anydev import scan
from anydev._cli import main as cli, scan as _scan_cli
from anydev._migrate import formats as _scan_formats
def hwm():
    with open("/proc/self/status") as f:
        return int(next(l for l in f if l.startswith("VmHWM:")).split()[1])
scan._rules()
os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
before = hwm()
rc = cli.main(["scan", "--no-config", "--jobs", "1", "--format", sys.argv[2], sys.argv[1]])
sys.stderr.write(f"{hwm() - before} {rc}\n")
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="no /proc (VmHWM)")
@pytest.mark.parametrize("fmt", ["text", "json", "github"])
def test_streamed_formats_peak_memory_does_not_grow_with_the_findings(tmp_path, fmt):
    """What `anydev scan` adds to the interpreter's peak memory (VmHWM of a
    child) with 4x the findings (20,000 and 80,000): about the same for the
    streamed formats (benchmarks/scan/bench_costs.py --memory-only: 0.97 to
    1.01), where the whole tree's report made it 3.3 to 4.7 times as much."""
    import subprocess

    body = b"import torch\n" + b"torch.cuda.synchronize()\n" * 200
    peaks = []
    for n in (100, 400):
        root = tmp_path / f"tree{n}"
        root.mkdir()
        for i in range(n):
            (root / f"m{i:04d}.py").write_bytes(body)
        p = subprocess.run([sys.executable, "-c", MEMORY_CHILD, str(root), fmt],
                           capture_output=True, text=True, timeout=300)
        kib, rc = p.stderr.split()[-2:]
        assert rc == "1", p.stderr
        peaks.append(int(kib))
    small, big = peaks
    assert big <= 1.5 * small + 1024, peaks  # KiB; the whole tree's grew 3-5x


@pytest.mark.parametrize("args", [[], ["--format", "json"], ["--statistics"]])
def test_a_file_reached_twice_is_counted_once(tree, args):
    """`scan clean clean/x.py`: a file without findings that both paths reach
    was counted twice in the summary (and its bytes in --statistics), where
    one with findings or errors was counted once."""
    (tree / "clean").mkdir()
    (tree / "clean" / "x.py").write_text("print(1)\n")
    rc, out, err = run_cli("scan", "--no-config", *args, "clean", "clean/x.py")
    assert (rc, out, err) == run_cli("scan", "--no-config", *args, "clean") and rc == 0
    if not args:
        assert out == "No legacy references found (1 file scanned).\n"
    if args == ["--statistics"]:
        assert "; 1 files scanned (0.0 MB)." in out
    twice = scan._scan_report(["sub/clean.py", "sub", "./sub/clean.py"])
    once = scan._scan_report(["sub"])
    assert (twice.files, twice.bytes, twice.findings) == (once.files, once.bytes, once.findings)


def test_walk_files_is_the_walk_of_scan_tree(tree):
    """walk_files, what a stream starts from: the files scan_tree scans, in
    its order, with its count of what ignore rules skipped and its path
    errors."""
    (tree / ".gitignore").write_text("sub/deep/\n*.cu\n")
    (tree / "notes.txt").write_text("x\n")
    native, _rows = scan._scan_rules(scan.rule_filter())
    paths = [b".", b"notes.txt"]
    names, path_errors, ignored = scan._native().walk_files(paths, [], True)
    assert names == scan._native().list_files(paths, [], True)[0]
    report, nfiles, _nbytes, want = scan._native().scan_tree(native, paths, [], True, 1,
                                                             1 << 20)
    assert ignored == want == 2 and nfiles == len(names)
    assert [p[0] for p in path_errors] == [report.files()[0][0]] == [b"notes.txt"]
    assert not any(n.endswith((b".cu", b".cc")) for n in names)
    assert scan._native().walk_files(paths, [], False)[2] == 0


FORK_CHILD = r"""
import os, sys
from anydev import scan
want = scan.scan_paths([sys.argv[1]], jobs=2).findings  # the scan threads start (and stay)
pid = os.fork()
if pid == 0:  # only the forking thread is copied: the child must start its own
    os._exit(0 if scan.scan_paths([sys.argv[1]], jobs=2).findings == want else 3)
_, status = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(status), len(want))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_scan_threads_are_kept_and_a_forked_child_starts_its_own(tree):
    """Note [Scan threads] in walk.cc: the threads of a scan wait for the
    next (a stream scans a batch at a time); a process forked from one that
    has them scans on threads of its own, not on the parent's that it lacks."""
    import subprocess

    p = subprocess.run([sys.executable, "-c", FORK_CHILD, str(tree)], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    status, n = p.stdout.split()
    assert status == "0" and int(n) > 10
