"""The hand-written parser of `anydev scan`'s arguments (Note [Fast argv] in
anydev/_cli/main.py): it makes what argparse makes of a plain argument vector, and
leaves everything else (--help, errors, abbreviations, bundled short options)
to argparse, so behaviour and messages do not change; and `anydev scan` with
plain arguments imports neither argparse nor the rest of what start-up
avoids (benchmarks/python/bench_startup.py measures the time)."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import textwrap

import pytest

from anydev._cli import main as cli

from conftest import clean_env


def run_in(cwd, argv: list[str]) -> tuple[int, str, str]:
    p = subprocess.run(argv, cwd=cwd, env=clean_env(), capture_output=True, text=True,
                       timeout=60)
    return p.returncode, p.stdout, p.stderr

# Argument vectors the fast parser takes (it must agree with argparse on each).
FAST = [
    [],
    ["."],
    ["a.py"],
    ["a.py", "b.py", "src/"],
    ["-"],
    ["-", "--stdin-filename", "x.py"],
    [""],
    ["--quiet", "a.py"],
    ["a.py", "-q"],
    ["-q", "a.py", "b.py", "--exit-zero"],
    ["--select", "AD1", "--select", "AD6,AD7", "a.py"],
    ["--select=AD1", "--ignore=AD104", "--ignore", "AD2"],
    ["--select="],
    ["--select=-x"],
    ["--exclude", "third_party/", "--exclude=*_pb2.py", "."],
    ["--no-gitignore", "--no-config", "--statistics", "--show-fixes"],
    ["--jobs", "4", "a.py"],
    ["-j", "0"],
    ["--jobs=8", "--jobs", "2"],
    ["--jobs", " 3"],
    ["--jobs", "+3"],
    ["--jobs", "1_0"],
    ["--max-file-size", "1048576"],
    ["--max-file-size=0"],
    ["--target-torch", "2.1"],
    ["--target-torch=2.13"],
    ["--config", "pyproject.toml"],
    ["--format", "json"],
    ["--output-format", "sarif", "--format", "github"],
    ["--output-format=text"],
    ["--output", "report.txt", "a.py"],
    ["-o", "-", "a.py"],
    ["-o", "-"],
    ["--output=-x"],
    ["--baseline", "b.json", "--write-baseline", "c.json"],
    ["a b.py", "c,d.py"],
    ["--output", "out.json", "--format", "json", "--select", "AD1", "src", "tests"],
]

# Argument vectors it leaves to argparse (valid or not: argparse decides).
FALLBACK = [
    ["--help"],
    ["-h"],
    ["a.py", "-h"],
    ["--bogus"],
    ["--sel", "AD1"],             # an abbreviation argparse accepts
    ["--stat"],
    ["--quiet=1"],
    ["--jobs"],
    ["--jobs", "-1"],
    ["--jobs", "x"],
    ["--jobs", "2.5"],
    ["-j4"],
    ["-qj", "4"],
    ["-j=4"],
    ["--max-file-size", "-3"],
    ["--target-torch", "9"],
    ["--target-torch", "two"],
    ["--format", "xml"],
    ["--format=TEXT"],
    ["--output"],
    ["--output", "--quiet"],
    ["--select", "-x"],
    ["a.py", "--quiet", "b.py"],
    ["--", "a.py"],
    ["-1"],
    ["-x y"],
    ["-q", "a.py", "-o", "x", "b.py"],
    ["-o", ""],                   # an empty file name: argparse refuses it
    ["--output=", "a.py"],
    ["--baseline", ""],
    ["--write-baseline="],
    ["--config", "", "a.py"],
    ["--stdin-filename", "", "-"],
]


def argparse_parse(argv: list[str]):
    """(namespace or None, exit status, stderr) of argparse's parse of `anydev scan ARGV`."""
    err = io.StringIO()
    out = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            return cli.command_parser("scan").parse_args(argv), None, err.getvalue()
        except SystemExit as e:
            return None, e.code, err.getvalue()


@pytest.mark.parametrize("argv", FAST, ids=lambda a: " ".join(a) or "(none)")
def test_fast_parse_is_what_argparse_makes(argv):
    fast = cli._fast_scan_args(list(argv))
    assert fast is not None, "the fast parser should take this plain vector"
    ns, code, err = argparse_parse(list(argv))
    assert ns is not None, (code, err)
    assert vars(fast) == vars(ns)


@pytest.mark.parametrize("argv", FALLBACK, ids=lambda a: " ".join(a))
def test_the_rest_is_left_to_argparse(argv):
    assert cli._fast_scan_args(list(argv)) is None


@pytest.mark.parametrize("argv", [a for a in FALLBACK if a[:1] not in (["--help"], ["-h"])]
                         + [["a.py", "-h"]], ids=lambda a: " ".join(a))
def test_errors_and_help_are_argparse_s_own(argv, tmp_path, monkeypatch):
    # What `anydev scan ARGV` prints and exits with when argparse rejects
    # the vector (or prints help): exactly argparse's own, exit 2 (0 for help).
    monkeypatch.chdir(tmp_path)
    ns, code, err = argparse_parse(list(argv))
    if ns is not None:  # valid for argparse (an abbreviation): it runs as before
        return
    out, got_err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(got_err):
        rc = cli.main(["scan", *argv])
    assert rc == code
    assert got_err.getvalue() == err
    if code == 2:
        assert "anydev scan: error: " in err


def test_bad_arguments_exit_2_with_the_message(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cases = {
        ("--jobs", "-1"): "argument --jobs/-j: must be >= 0 threads, not -1",
        ("--jobs", "x"): "argument --jobs/-j: 'x' is not a whole number",
        ("--format", "xml"): "argument --output-format/--format: invalid choice: 'xml'",
        ("--bogus",): "unrecognized arguments: --bogus",
        ("a.py", "--quiet", "b.py"): "unrecognized arguments: b.py",
        ("--output",): "argument --output/-o: expected one argument",
        ("--target-torch", "two"): "argument --target-torch:",
        ("-o", ""): "argument --output/-o: the file name is empty",
        ("--baseline=",): "argument --baseline: the file name is empty",
        ("--stdin-filename", "", "-"): "argument --stdin-filename: the file name is empty",
    }
    for argv, message in cases.items():
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = cli.main(["scan", *argv])
        assert rc == 2, argv
        assert err.getvalue().startswith("usage: anydev scan "), (argv, err.getvalue())
        assert message in err.getvalue(), (argv, err.getvalue())


def test_the_fast_parser_knows_every_option_of_the_parser():
    # Each option string of argparse's `anydev scan` parser is the fast
    # parser's (or -h/--help, which argparse keeps), with the same dest.
    parser = cli.command_parser("scan")
    for action in parser._actions:
        for opt in action.option_strings:
            if opt in ("-h", "--help"):
                continue
            dest = cli._SCAN_FLAGS.get(opt) or cli._SCAN_VALUES.get(opt, (None,))[0]
            assert dest == action.dest, opt
            assert (opt in cli._SCAN_FLAGS) == (action.nargs == 0), opt
    known = {o for a in parser._actions for o in a.option_strings}
    assert set(cli._SCAN_FLAGS) | set(cli._SCAN_VALUES) <= known


def test_fast_and_argparse_runs_print_the_same(tmp_path, monkeypatch):
    # The same scan through the fast path and through argparse (an
    # abbreviation sends it there) prints the same report.
    (tmp_path / "t.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    monkeypatch.chdir(tmp_path)
    runs = []
    for argv in (["scan", "t.py", "--show-fixes", "--target-torch", "2.13"],
                 ["scan", "t.py", "--show-fix", "--target-torch", "2.13"]):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = cli.main(argv)
        runs.append((rc, out.getvalue(), err.getvalue()))
    assert runs[0] == runs[1]
    assert runs[0][0] == 1 and "AD107" in runs[0][1] and "Would fix 1 finding" in runs[0][1]


# (anydev._migrate.torch_versions is not here: the report's marks read the target
# torch, and the reader imports none of these: Note [A light target reader].)
HEAVY = ("argparse", "gettext", "locale", "tomllib", "typing", "dataclasses", "inspect",
         "enum", "re", "shutil", "json", "subprocess", "anydev._compat.table", "anydev._C",
         "ast")


@pytest.mark.parametrize("pyproject", [
    None,
    # A real project's file that names anydev as a dependency: no [tool.anydev].
    '[project]\nname = "trainer"\ndependencies = ["torch>=2.1", "anydev>=0.1"]\n'
    '[tool.ruff]\nline-length = 100\n',
])
def test_scan_of_a_file_imports_nothing_heavy(tmp_path, pyproject):
    # What `anydev scan file.py` loads (sys.modules, not time): none of the
    # modules its start-up avoids.
    (tmp_path / "t.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    if pyproject is not None:
        (tmp_path / "pyproject.toml").write_text(pyproject)
    code = textwrap.dedent(f"""
        import sys
        from anydev._cli import main as cli
        rc = cli.main(["scan", "t.py"])
        print(rc, sorted(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)
    """)
    rc, out, err = run_in(tmp_path, [sys.executable, "-c", code])
    assert rc == 0, err
    assert "t.py:2:1: AD107" in out
    assert err.strip().splitlines()[-1] == "1 []"


def test_a_tool_anydev_table_is_still_read(tmp_path):
    # With a [tool.anydev] table the file is parsed and applies, by anydev's
    # own reader: tomllib is not imported (it was half of the start-up).
    (tmp_path / "t.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    for table in ('[tool.anydev]\nignore = ["AD107"]\n',
                  '[tool]\nanydev = { ignore = ["AD107"] }\n',
                  '[tool . "anydev"]\nignore = ["AD107"]\n',
                  'tool.anydev.ignore = ["AD107"]\n'):
        (tmp_path / "pyproject.toml").write_text(table + '[project]\nname = "x"\n')
        code = textwrap.dedent("""
            import sys
            from anydev._cli import main as cli
            rc = cli.main(["scan", "t.py"])
            print(rc, sorted(m for m in HEAVY if m in sys.modules), file=sys.stderr)
        """).replace("HEAVY", repr(HEAVY))
        p = run_in(tmp_path, [sys.executable, "-c", code])
        assert p[2].strip().splitlines()[-1] == "0 []", (table, p)
        assert "No legacy references found" in p[1]


def test_console_script_scan(tmp_path):
    # The installed console script takes the same path.
    script = os.path.join(os.path.dirname(sys.executable), "anydev")
    if not os.path.exists(script):
        pytest.skip("no console script next to this interpreter")
    (tmp_path / "t.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    line = ("t.py:2:1: AD107{} `torch.cuda.synchronize` is device-specific; use "
            "`torch.accelerator.synchronize` (torch >= 2.6)")
    # no torch declared: the fix must run on every release the table knows, so no `[*]`
    rc, out, err = run_in(tmp_path, [script, "scan", str(tmp_path / "t.py")])
    assert rc == 1, err
    assert out.splitlines() == [line.format(""), (
        "Found 1 legacy reference in 1 file (1 more with a newer `--target-torch`). "
        "Target torch: 1.13, from the default: every release the table knows.")]
    (tmp_path / "requirements.txt").write_text("torch>=2.6\n")
    rc, out, err = run_in(tmp_path, [script, "scan", str(tmp_path / "t.py"), "--quiet"])
    assert rc == 1, err
    assert out.splitlines() == [line.format(" [*]")]


def test_the_command_imports_nothing_heavy_either(tmp_path):
    # The installed `anydev` is python/bin/anydev, a wheel script: unlike the
    # wrapper pip writes for an entry point, it does not import re (a third of
    # the start-up). -X importtime lists every module the command imports.
    script = os.path.join(os.path.dirname(sys.executable), "anydev")
    if not os.path.exists(script):
        pytest.skip("no console script next to this interpreter")
    with open(script, encoding="utf-8") as f:
        first = f.readline()
    assert first.startswith("#!") and "python" in first  # the installer's interpreter
    (tmp_path / "t.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    p = subprocess.run([sys.executable, "-X", "importtime", script, "scan", "t.py"],
                       cwd=tmp_path, capture_output=True, text=True)
    assert p.returncode == 1, p.stderr
    imported = {line.rsplit("|", 1)[1].strip() for line in p.stderr.splitlines()
                if line.startswith("import time:") and "|" in line}
    assert "anydev._cli.main" in imported
    assert sorted(imported & set(HEAVY)) == []
