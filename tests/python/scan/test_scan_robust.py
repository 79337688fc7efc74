"""Bad input to the scanner's native side and to the report loader (issue 14):
file names that are not UTF-8, FIFOs, globs that a backtracking matcher
could not finish, reports nested 100,000 deep or with 5,000-digit numbers,
and the parts of files that were not scanned. Each must give a result or a
clear error, never a hang or a traceback. Pairs with tests/cpp/scan_test.cc.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys

import pytest

from anydev import _C
from anydev.scan import iter_scan_paths, quote_path, scan_paths, unquote_path

from conftest import run_cli, run_command

LEGACY = b"import torch\ntorch.cuda.synchronize()\n"


# --- file contents that are not UTF-8 ----------------------------------------------

# A C++ file need not be UTF-8; a stray byte inside what the scanner reports (found by
# fuzz/fix_fuzz.py: `t\x9brch::kCUDA`) made every scan of the tree a UnicodeDecodeError.
BAD_CPP = (b"#include <torch/torch.h>\n"
           b"void f(const at::Tensor& t) {\n"
           b"  auto o = t.options().device(t\x9brch::kCUDA, 0);\n"
           b"  c10::cuda::device_synchronize();  // caf\xe9\n"
           b"}\n")


def test_non_utf8_bytes_in_a_finding_are_replaced_not_a_crash(tmp_path, monkeypatch):
    from anydev.fix import fix_source
    from anydev.scan import scan_source

    findings, errors = scan_source(BAD_CPP, "k.cu")
    assert {"AD605", "AD951"} <= {f.rule for f in findings}
    assert [(e.line, e.message) for e in errors] == [(3, "invalid UTF-8 (byte 0x9B); scanned as bytes")]
    assert any("\ufffd" in f.text or "\ufffd" in f.symbol for f in findings), findings
    # the fixer checks each finding against the file and rewrites what it can
    new, applied, skipped = fix_source(BAD_CPP, "k.cu", findings, unsafe=True)
    assert b"t\x9brch::kCUDA" in new and b"caf\xe9" in new  # the bytes it left are kept
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.cu").write_bytes(BAD_CPP)
    r = run_cli("scan", "k.cu")
    assert r[0] == 1 and "Traceback" not in r[2], r
    r = run_cli("fix", "--diff", "--target-torch", "2.13", ".")
    assert r[0] in (0, 1) and "Traceback" not in r[2], r


# --- file names that are not UTF-8 -------------------------------------------------

def test_quote_path_is_gits():
    assert quote_path(b"caf\xe9.py") == '"caf\\351.py"'
    assert quote_path(b'a"b\\c\n\xff.py') == '"a\\"b\\\\c\\n\\377.py"'


@pytest.mark.parametrize("raw", [b"caf\xe9.py", b'a"b\\c\n\xff.py', b"plain.py",
                                 "\u00e9t\u00e9.py".encode(), b"\x01\x7f\x80.py"])
def test_unquote_path_gives_back_the_bytes(raw):
    shown = quote_path(raw)
    assert unquote_path(shown) == raw
    assert unquote_path("plain.py") is None and unquote_path('"a\\q"') is None


@pytest.fixture(name="latin1_tree")
def latin1_tree_fixture(tmp_path, monkeypatch):
    """A tree with a Latin-1 file name beside two ordinary files."""
    monkeypatch.chdir(tmp_path)
    src = tmp_path / "src"
    src.mkdir()
    bad = os.path.join(os.fsencode(src), b"caf\xe9.py")
    with open(bad, "wb") as f:
        f.write(LEGACY)
    (src / "a.py").write_bytes(LEGACY)
    (src / "z.py").write_bytes(LEGACY)
    return src, bad


def test_non_utf8_names_in_a_walk_are_scanned_and_quoted(latin1_tree):
    r = scan_paths(["src"])
    assert [f.path for f in r.findings] == ["src/a.py", '"src/caf\\351.py"', "src/z.py"]
    assert r.files == 3 and r.errors == []


def test_non_utf8_names_given_directly(latin1_tree):
    _, bad = latin1_tree
    r = scan_paths([os.fsdecode(bad), "src/a.py"])  # as sys.argv has it: surrogateescape
    assert sorted(f.path for f in r.findings) == ['"src/caf\\351.py"', "src/a.py"]
    assert r.errors == []


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_cli_reports_a_non_utf8_name_in_every_format(latin1_tree, fmt):
    # A real process: its stdout is a UTF-8 stream that a surrogate would break.
    rc, out, err = run_command([sys.executable, "-m", "anydev", "scan", "--no-config",
                                "--format", fmt, "src"])
    assert "Traceback" not in err, err
    assert rc in (0, 1), err
    # SARIF has it as a URI: percent-encoded.
    assert "caf\\351.py" in out.replace("\\\\", "\\").replace("%5C", "\\")
    assert "z.py" in out


def test_fix_goes_on_past_a_non_utf8_name(latin1_tree):
    src, _ = latin1_tree
    rc, out, err = run_command([sys.executable, "-m", "anydev", "fix", "--no-config", "--target-torch", "2.13", "src"])
    assert "Traceback" not in err, err
    assert b"synchronize" not in (src / "a.py").read_bytes() or rc != 0
    # The file it cannot rewrite is named with the reason, not "No such file".
    assert '"src/caf\\351.py": error: its name is not UTF-8' in err, err
    assert "No such file" not in err


# --- non-regular files ---------------------------------------------------------------

@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")
def test_a_fifo_named_directly_is_refused_at_once(tmp_path):
    fifo = tmp_path / "pipe.py"
    os.mkfifo(fifo)
    (tmp_path / "ok.py").write_bytes(LEGACY)
    # In a child, so that a hang fails the test instead of stalling the suite.
    code = ("import sys; from anydev.scan import scan_paths; "
            "r = scan_paths(sys.argv[1:]); "
            "print([e.message for e in r.errors], len(r.findings))")
    p = subprocess.run([sys.executable, "-c", code, str(fifo), str(tmp_path / "ok.py")],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert "not a regular file (a FIFO); skipped" in p.stdout and p.stdout.rstrip().endswith("1")


def test_a_device_named_directly_is_refused(tmp_path):
    r = scan_paths(["/dev/null"])
    assert [e.message for e in r.errors] == ["not a regular file (a character device); skipped"]


# --- globs against git ---------------------------------------------------------------

def _random_glob(r: random.Random) -> str:
    """A glob of the pieces git gives meaning to (never a trailing '/')."""
    parts = []
    for _ in range(r.randint(1, 5)):
        parts.append(r.choice(["a", "b", "ab", "*", "**", "?", "[ab]", "[!a]", "/", "**/",
                               "/**/", "a*", "*b", "x"]))
    g = "".join(parts).strip("/")
    return g.replace("///", "/").replace("//", "/") or "a"


def _random_path(r: random.Random) -> str:
    segs = ["".join(r.choice("abx") for _ in range(r.randint(1, 4)))
            for _ in range(r.randint(1, 4))]
    return "/".join(segs)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_gitignore_matches_like_git_check_ignore(tmp_path):
    """Generated .gitignore lines (anchored with a leading '/', or matched
    against the name at any depth) and paths, against `git check-ignore`.
    git also ignores what is below an ignored folder, so a path counts as
    ignored when it, or a folder above it, matches."""
    r = random.Random(14)
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    base = str(repo)
    mismatches = []
    for case in range(200):
        line = ("/" if case % 2 == 0 else "") + _random_glob(r)
        if case % 2 and "/" not in line and r.random() < 0.3:
            line = "*" + line
        paths = sorted({_random_path(r) for _ in range(40)})
        (repo / ".gitignore").write_text(line + "\n")
        p = subprocess.run(["git", "-c", "core.quotePath=false", "check-ignore", "--no-index",
                            "--stdin"], cwd=repo, input="\n".join(paths) + "\n",
                           capture_output=True, text=True)
        assert p.returncode in (0, 1), p.stderr
        git = set(p.stdout.split())
        for path in paths:
            segs = path.split("/")
            ours = any(_C._scan.ignore_match([line], base, base + "/" + "/".join(segs[:k]),
                                             k < len(segs)) > 0
                       for k in range(1, len(segs) + 1))
            if ours != (path in git):
                mismatches.append((line, path, path in git))
    assert mismatches == []


def test_pathological_globs_finish(tmp_path, monkeypatch):
    # 69 s and over 120 s with the old backtracking matcher.
    monkeypatch.chdir(tmp_path)
    name = "a" * 40
    (tmp_path / (name + ".py")).write_bytes(LEGACY)
    (tmp_path / ".gitignore").write_text("*a*a*a*a*a*a*a*a*a*a*b\n")
    r = scan_paths(["."], exclude=["*a*a*a*a*a*a*a*a*a*a*a*a*b"])
    assert len(r.findings) == 1


# --- reports that are not reports ---------------------------------------------------

def _report(calls=(), processes=()):
    from anydev import report
    return {"format": report.FORMAT, "version": report.VERSION, "processes": list(processes),
            "calls": list(calls)}


@pytest.mark.parametrize("text,what", [
    ("[" * 100_000 + "]" * 100_000, "nested 100000 levels deep"),
    ('{"a": ' * 100_000 + "1" + "}" * 100_000, "nested 100000 levels deep"),
    ("[" + "9" * 5000 + "]", "an integer of 5000 digits"),
    ('{"format": "anydev-report", "version": 1, "processes": [], "calls": [{"count": '
     + "1" * 4301 + "}]}", "an integer of 4301 digits"),
    ("[NaN]", "NaN is not JSON"),
])
@pytest.mark.parametrize("action", ["show", "merge"])
def test_report_hostile_json_is_a_clear_error(tmp_path, text, what, action):
    path = tmp_path / "r.json"
    path.write_text(text)
    if action == "show":
        rc, out, err = run_cli("report", "show", str(path))
    else:
        rc, out, err = run_cli("report", "merge", str(path), "-o", str(tmp_path / "m.json"))
    assert rc == 2, (out, err)
    assert what in err and str(path) in err
    assert "Traceback" not in err


def test_report_depth_counts_brackets_outside_strings(tmp_path):
    from anydev import report
    deep_string = "[" * 1000
    r = _report(processes=[{"argv": [deep_string, "a\\\"[", "{"]}])
    path = tmp_path / "r.json"
    path.write_text(json.dumps(r))
    assert report.load(str(path))["processes"][0]["argv"][0] == deep_string


# --- parts not scanned are errors ----------------------------------------------------

def test_unscanned_parts_are_errors(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a_utf8.py").write_bytes(LEGACY + b"x = '\xff'\ntorch.cuda.empty_cache()\n")
    (tmp_path / "b_nul.py").write_bytes(LEGACY + b"\x00")
    (tmp_path / "c_big.py").write_bytes(LEGACY + b"#" * 5000 + b"\n")
    r = scan_paths(["."], max_file_size=1000)
    errors = {e.path: (e.line, e.message) for e in r.errors}
    assert errors == {
        "a_utf8.py": (3, "invalid UTF-8 (byte 0xFF); not scanned from there on"),
        "b_nul.py": (3, "binary file (a NUL byte); skipped"),
        "c_big.py": (None, "file is 5039 bytes, over the limit of 1000 (a generated file?); "
                           "skipped"),
    }
    assert [(f.path, f.line) for f in r.findings] == [("a_utf8.py", 2)]


# --- streaming -----------------------------------------------------------------------

def test_iter_scan_paths_gives_scan_paths_in_batches(tmp_path, monkeypatch):
    from anydev.scan import iter_scan_paths
    monkeypatch.chdir(tmp_path)
    for i in range(7):
        (tmp_path / f"m{i}.py").write_bytes(LEGACY * (i + 1) if i != 3 else b"x = 1\n")
    (tmp_path / "bad.py").write_bytes(b"\x00")
    whole = scan_paths(["."], select=["AD1"])
    parts = list(iter_scan_paths(["."], select=["AD1"], batch=3))
    assert len(parts) == 3
    assert [f for p in parts for f in p.findings] == whole.findings
    assert [e for p in parts for e in p.errors] == whole.errors
    assert sum(p.files for p in parts) == whole.files and sum(p.bytes for p in parts) == whole.bytes
    missing = list(iter_scan_paths(["nope.py", "m0.py"]))
    assert [e.message for e in missing[0].errors][0].startswith("cannot read")
    assert [f.path for f in missing[0].findings] == ["m0.py"]
    with pytest.raises(ValueError):
        iter_scan_paths(["."], batch=0)


# --- numbers past what the native side takes ------------------------------------------

@pytest.mark.parametrize("how", ["flag", "config"])
def test_huge_max_file_size_and_jobs_are_no_limit_not_a_type_error(tmp_path, monkeypatch, how):
    # `max-file-size = 9999999999999999999999` (a valid TOML integer, and >= 0) and
    # `--jobs 3000000000` were passed on to a uint64_t and an int: a TypeError traceback.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_bytes(LEGACY)
    huge = "9" * 22
    if how == "config":
        (tmp_path / "anydev.toml").write_text(f"max-file-size = {huge}\n")
        argv = ["-j", "3000000000", "."]
    else:
        argv = ["--max-file-size", huge, "-j", "3000000000", "."]
    for command in ("scan", "fix"):
        r = run_cli(command, *(["--diff", "--target-torch", "2.13"] if command == "fix" else []), *argv)
        assert r[0] == 1 and "Traceback" not in r[2], r
        assert "torch.accelerator.synchronize" in r[1], r


@pytest.mark.parametrize("fmt", ["text", "markdown", "json", "sarif"])
def test_report_show_of_a_lone_surrogate_is_an_escape_not_a_traceback(tmp_path, fmt):
    # "\udcff" is valid JSON, and what a run writes for a file name that is not
    # UTF-8 (os.fsdecode's surrogateescape); `report show` once died writing it
    # to a UTF-8 stdout (UnicodeEncodeError).
    path = tmp_path / "r.json"
    call = {"file": "caf\udce9.py", "line": 3, "module": "__main__",
            "legacy": "torch.cuda.current_device", "rule": "AD103\ud800",
            "replacement": "torch.accelerator.current_device_index", "count": 2,
            "first_seen": "2026-01-01T00:00:05.000Z"}
    path.write_text(json.dumps(_report(calls=[call])))
    rc, out, err = run_command([sys.executable, "-m", "anydev", "report", "show", "--format", fmt,
                                str(path)], env={"PYTHONIOENCODING": "utf-8"})
    assert rc == 0 and "Traceback" not in err, (out, err)
    assert "torch.cuda.current_device" in out
    assert "caf\\udce9.py" in out  # its escape, in every format (JSON's own too)


def test_fix_diff_quotes_a_name_with_a_line_break_as_git_does(tmp_path, monkeypatch):
    # `--- a/n` then `l.py`: a header no patch tool reads. In git's quotes, git
    # apply takes it.
    from anydev._migrate.fix.engine import unified_diff

    assert unified_diff("n\nl.py", "a\n", "b\n").splitlines()[:2] == [
        '--- "a/n\\nl.py"', '+++ "b/n\\nl.py"']
    assert unified_diff("caf\u00e9.py", "a\n", "b\n").startswith("--- a/caf\u00e9.py\n")
    if shutil.which("git") is None:
        return
    monkeypatch.chdir(tmp_path)
    for name in ("n\nl.py", 'q"b\\.py'):
        (tmp_path / name).write_bytes(LEGACY)
    rc, out, err = run_cli("fix", "--diff", "--no-config", "--target-torch", "2.13", ".")
    assert rc == 1 and out.count("+torch.accelerator.synchronize()") == 2, (out, err)
    subprocess.run(["git", "init", "-q"], check=True)
    (tmp_path / "p.diff").write_text(out)
    subprocess.run(["git", "apply", "p.diff"], check=True)
    assert (tmp_path / "n\nl.py").read_bytes() == LEGACY.replace(b"cuda", b"accelerator")


@pytest.mark.parametrize("argv,what", [
    (["scan", "."], "the report"), (["fix", "--diff", "."], "the diff"),
    (["fix", "-"], "the fixed file")])
def test_a_closed_stdout_is_a_clear_error(tmp_path, argv, what):
    # `anydev scan . >&-`: Python sets sys.stdout to None, and writing the
    # report was an AttributeError traceback.
    (tmp_path / "a.py").write_bytes(LEGACY)
    p = subprocess.run([sys.executable, "-m", "anydev", *argv, "--no-config"], cwd=tmp_path,
                       input=LEGACY, stderr=subprocess.PIPE, preexec_fn=lambda: os.close(1),
                       timeout=120)
    err = p.stderr.decode()
    assert p.returncode == 2 and "Traceback" not in err, err
    assert f"cannot write {what} to stdout: it is closed" in err
    assert (tmp_path / "a.py").read_bytes() == LEGACY


def test_an_odd_tree_is_walked_to_the_end(tmp_path, monkeypatch):
    # What held in the sweep of issue 14: links in a loop, a FIFO and a socket
    # in the walk (skipped, no hang), a folder named like a source file, an
    # empty file, a file of only a BOM, CR-only line ends, and a 2 GB sparse
    # file over max-file-size (skipped without reading it).
    import socket
    import time

    tree = tmp_path / "t"
    tree.mkdir()
    (tree / "ok.py").write_bytes(LEGACY)
    (tree / "cr.py").write_bytes(LEGACY.replace(b"\n", b"\r"))
    (tree / "empty.py").write_bytes(b"")
    (tree / "bom.py").write_bytes(b"\xef\xbb\xbf")
    (tree / "dir.py").mkdir()
    os.symlink(".", tree / "self")
    os.symlink("loop2", tree / "loop1")
    os.symlink("loop1", tree / "loop2")
    os.mkfifo(tree / "fifo.py")
    s = socket.socket(socket.AF_UNIX)
    try:
        s.bind(str(tree / "sock.py"))
    except OSError:  # a path too long for a socket's address
        pass
    with open(tree / "sparse.py", "wb") as f:
        f.truncate(2 << 30)
    monkeypatch.chdir(tree)
    start = time.perf_counter()
    try:
        rc, out, err = run_cli("scan", ".")
    finally:
        s.close()
    assert time.perf_counter() - start < 30
    assert rc == 1, err
    found = sorted(line.split(":")[0] for line in out.splitlines() if ": AD107" in line)
    assert found == ["cr.py", "ok.py"], out
    assert "sparse.py: error: file is 2147483648 bytes, over the limit" in err
    assert "Traceback" not in err


def test_a_file_named_twice_is_scanned_and_fixed_once(tmp_path, monkeypatch):
    # `scan a.py ./a.py` listed the finding twice, and `fix --diff a.py a.py`
    # counted two findings in one file.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_bytes(LEGACY)
    rc, out, err = run_cli("scan", "--no-config", "src/a.py", "./src/a.py", "src//a.py")
    assert rc == 1 and out.count("AD107") == 1, (out, err)
    rc, out, err = run_cli("scan", "--no-config", "src", "src/", "./src")
    assert rc == 1 and out.count("AD107") == 1, (out, err)
    rc, out, err = run_cli("fix", "--no-config", "--target-torch", "2.13", "--diff", "src/a.py", "./src/a.py")
    assert rc == 1 and out.count("+torch.accelerator") == 1, (out, err)
    assert "would fix 1 finding(s) in 1 file(s)" in err


def test_empty_and_dash_arguments_say_what_they_are(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_bytes(LEGACY)
    rc, out, err = run_cli("scan", "--no-config", "")
    assert rc == 2 and "a PATH is empty" in err, err
    rc, out, err = run_cli("fix", "--no-config", "--target-torch", "2.13", "a.py", "")
    assert rc == 2 and "a PATH is empty" in err, err
    # `-o ''` printed to stdout as if no -o were given; `-o -` is stdout.
    rc, out, err = run_cli("scan", "--no-config", "a.py", "-o", "")
    assert rc == 2 and "argument --output/-o: the file name is empty" in err, err
    rc, out, err = run_cli("scan", "--no-config", "--format", "json", "a.py", "-o", "-")
    assert rc == 1 and json.loads(out)["findings"][0]["rule"] == "AD107", (out, err)
    assert sorted(os.listdir(tmp_path)) == ["a.py"]
    rc, out, err = run_cli("-")
    assert rc == 2 and "`-` is not a command" in err, err


def test_a_file_reached_by_two_paths_is_reported_once(tmp_path, monkeypatch):
    # `scan src src/a.py`: the walk of src and the name reach one file.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_bytes(LEGACY)
    (tmp_path / "src" / "b.py").write_bytes(LEGACY)
    r = scan_paths(["src", "src/a.py"])
    assert [f.path for f in r.findings] == ["src/a.py", "src/b.py"] and r.files == 2
    rc, out, err = run_cli("scan", "--no-config", "src/a.py", "src")
    assert rc == 1 and out.count("src/a.py:2:1: AD107") == 1, out
    assert "Found 2 legacy references in 2 files" in out
    rc, out, err = run_cli("fix", "--no-config", "--target-torch", "2.13", "--diff", "src", "src/b.py")
    assert out.count("+torch.accelerator") == 2 and "would fix 2 finding(s) in 2 file(s)" in err


def test_text_report_quotes_a_name_with_a_line_break(tmp_path, monkeypatch):
    # `n\nl.py:2:1: AD107 ...` printed as two lines, the first no tool reads.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "n\nl.py").write_bytes(LEGACY)
    (tmp_path / "caf\u00e9.py").write_bytes(LEGACY)
    rc, out, err = run_cli("scan", "--no-config", "--show-fixes", "--target-torch", "2.13", ".")
    assert rc == 1
    assert out.splitlines()[:2] == [
        "caf\u00e9.py:2:1: AD107 [*] `torch.cuda.synchronize` is device-specific; use "
        "`torch.accelerator.synchronize` (torch >= 2.6)",
        '"n\\nl.py":2:1: AD107 [*] `torch.cuda.synchronize` is device-specific; use '
        "`torch.accelerator.synchronize` (torch >= 2.6)"]
    assert '- "n\\nl.py":' in out
    rc, out, err = run_cli("scan", "--no-config", "--format", "json", ".")
    assert [f["path"] for f in json.loads(out)["findings"]] == ["caf\u00e9.py", "n\nl.py"]


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_a_report_on_a_latin1_stdout_is_written_not_a_traceback(tmp_path, fmt):
    # SARIF's `→` on a Latin-1 stdout was a UnicodeEncodeError traceback.
    (tmp_path / "\u4e2d.py").write_bytes(LEGACY)
    p = subprocess.run([sys.executable, "-m", "anydev", "scan", "--no-config", "--format", fmt,
                        "."], cwd=tmp_path, capture_output=True, timeout=120,
                       env={**os.environ, "PYTHONIOENCODING": "latin-1"})
    assert p.returncode == 1 and b"Traceback" not in p.stderr, p.stderr
    if fmt == "text":  # in the locale's encoding, what it lacks escaped
        assert p.stdout.startswith(b"\\u4e2d.py:2:1: AD107")
    else:  # a machine format is UTF-8 on any locale (SARIF's names are URIs)
        assert ("\u2192" if fmt == "sarif" else "\u4e2d.py").encode() in p.stdout
        if fmt != "github":
            json.loads(p.stdout.decode("utf-8"))


def test_noqa_applies_to_a_file_whose_name_is_not_utf8(latin1_tree):
    _, bad = latin1_tree
    with open(bad, "wb") as f:
        f.write(b"import torch\ntorch.cuda.synchronize()  # noqa: AD107\n")
    assert [f.path for f in scan_paths(["src"]).findings] == ["src/a.py", "src/z.py"]
    streamed = [f.path for part in iter_scan_paths(["src"], batch=1) for f in part.findings]
    assert streamed == ["src/a.py", "src/z.py"]
