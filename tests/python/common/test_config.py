"""The one configuration (anydev._common.config): schema, discovery, globs, unknown
keys, and what scan, fix, the runtime policy and the torch scope take from it;
and the ruff-like conventions of `anydev scan`/`fix` (noqa, per-file ignores,
keep, stdin, --exit-zero, unscanned parts, colour, completion)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import run_cli, run_command, run_python

from anydev._common import config as _config
from anydev._migrate import noqa as _noqa
from anydev._cli import scan as _scan_cli

ANYDEV = [sys.executable, "-m", "anydev"]
ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(
        "import torch\n\ndef step():\n    torch.cuda.synchronize()\n"
        "    return torch.cuda.current_device()\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    # the project declares its torch: the fixer's target (where none is declared it is
    # the oldest release the table knows, which has none of these rewrites)
    (tmp_path / "requirements.txt").write_text("torch>=2.13\n")
    return tmp_path


def rules(out: str) -> list[tuple[str, str]]:
    return [(f["path"], f["rule"]) for f in json.loads(out)["findings"]]


# --- the schema and its documentation ----------------------------------------------------


def test_docs_table_is_the_schema():
    text = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    start = text.index("-->\n", text.index("<!-- generated")) + 4
    end = text.index("<!-- end of the generated table -->")
    assert text[start:end] == _config.markdown_table()
    assert "docs/configuration.md" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_every_key_is_read(tmp_path):
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent("""\
        [tool.anydev]
        select = ["AD1, AD2"]
        extend-select = ["AD911"]
        ignore = ["AD104"]
        extend-ignore = ["AD105"]
        exclude = ["third_party/"]
        per-file-ignores = { "tests/**" = ["AD1"] }
        keep = ["backends/cuda.py"]
        baseline = "b.json"
        target-torch = "2.1"
        exit-zero = true
        fail-on-unscanned = false
        max-file-size = 1000
        respect-gitignore = false
        output-format = "json"
        legacy = "error"
        packages = ["myproj"]
        paths = ["scripts/*.py"]
        pytest = true
        pytest-strict = true
        pytest-report = "r.json"
        extend = "base.toml"
        [[tool.anydev.legacy-override]]
        module = "myproj.*"
        policy = "ignore"
        """))
    (tmp_path / "base.toml").write_text("")
    cfg = _config.load(str(tmp_path)).check()
    assert cfg.set == set(_config.KEY_NAMES)
    assert cfg.extend_select == ["AD911"] and cfg.extend_ignore == ["AD105"]
    assert cfg.pytest and cfg.pytest_strict and cfg.pytest_report == str(tmp_path / "r.json")
    assert cfg.extend == str(tmp_path / "base.toml")
    assert cfg.warnings == []
    assert cfg.select == ["AD1", "AD2"] and cfg.ignore == ["AD104"]
    assert cfg.per_file_ignores == [("tests/**", ["AD1"])]
    assert cfg.baseline == str(tmp_path / "b.json")
    assert cfg.target_torch == "2.1" and cfg.exit_zero and not cfg.fail_on_unscanned
    assert cfg.max_file_size == 1000 and not cfg.respect_gitignore
    assert cfg.output_format == "json" and cfg.legacy == "error"
    assert cfg.legacy_override == [{"module": "myproj.*", "policy": "ignore"}]
    assert cfg.paths == [str(tmp_path / "scripts" / "*.py")]


@pytest.mark.parametrize("body, key, message", [
    ('select = 3', "select", "`select` must be a list of strings"),
    # a string is no list (as in ruff): it was read as one, and a typo passed
    ('ignore = "AD107"', "ignore", "`ignore` must be a list of strings, not the string "
                                   "'AD107': write [\"AD107\"]"),
    ('select = "AD1, AD2"', "select", 'write ["AD1", "AD2"]'),
    ('extend-select = "AD001"', "extend-select", "`extend-select` must be a list"),
    ('extend-ignore = ["AD1!"]', "extend-ignore", "'AD1!' is not a rule code"),
    ('per-file-ignores = { "t/*" = "AD1" }', "per-file-ignores", "not the string 'AD1'"),
    ('extend = 3', "extend", "`extend` must be a path"),
    ('extend = "missing.toml"', "extend", "missing.toml: cannot read"),
    ('pytest = "yes"', "pytest", "`pytest` must be true or false"),
    ('pytest-report = ""', "pytest-report", "`pytest-report` must be a path"),
    ('select = ["AD1!"]', "select", "'AD1!' is not a rule code"),
    ("exclude = 3", "exclude", "`exclude` must be a list of strings"),
    ('per-file-ignores = ["x"]', "per-file-ignores", "must be a table of glob = [codes]"),
    ('per-file-ignores = { "t/*" = 3 }', "per-file-ignores", "must be a list of strings"),
    ('target-torch = "2"', "target-torch", "'2' is not a PyTorch version MAJOR.MINOR"),
    ('target-torch = 2.1', "target-torch", "is not a PyTorch version"),
    ('exit-zero = "yes"', "exit-zero", "`exit-zero` must be true or false"),
    ("max-file-size = -1", "max-file-size", "must be a number of bytes >= 0"),
    ('output-format = "jsn"', "output-format", "(did you mean 'json'?)"),
    ('legacy = "eror"', "legacy", "'eror' is not a policy; expected one of ignore, warn, "
                                  "error (did you mean 'error'?)"),
    ('packages = "myproj"', "packages", "`packages` must be a list of strings"),
])
def test_bad_value_names_file_and_key(project, body, key, message):
    (project / "pyproject.toml").write_text(f"[tool.anydev]\n{body}\n")
    cfg = _config.load(str(project))
    with pytest.raises(_config.ConfigError) as e:
        cfg.check([key])
    assert str(project / "pyproject.toml") in str(e.value) and message in str(e.value)
    for command in ("scan", "fix"):
        rc, out, err = run_cli(command)
        assert rc == 2, (command, out, err)
        assert str(project / "pyproject.toml") in err and message in err, err
        assert "Traceback" not in err


def test_target_torch_the_table_does_not_know(project):
    (project / "pyproject.toml").write_text('[tool.anydev]\ntarget-torch = "0.4"\n')
    for command in ("scan", "fix"):
        rc, _, err = run_cli(command)
        assert rc == 2 and "`target-torch`" in err and "from 1.0 on" in err, err
    rc, _, err = run_cli("fix", "--no-config", "--target-torch", "0.4")
    assert rc == 2 and "from 1.0 on" in err and "usage: anydev fix" in err


def test_unknown_key_is_a_warning_with_a_suggestion(project):
    (project / "pyproject.toml").write_text('[tool.anydev]\nselct = ["AD1"]\nignore = ["AD103"]\n')
    rc, out, err = run_cli("scan", "--format", "json")
    assert rc == 1, err
    assert (f"anydev scan: warning: {project / 'pyproject.toml'}: [tool.anydev]: unknown key "
            f"'selct' (did you mean 'select'?); ignored") in err
    assert ("train.py", "AD103") not in rules(out)  # the rest of the table still applies


def test_torch_scope_keys_do_not_stop_scan_or_fix(project):
    # docs/torch.md recommends these; they used to be "unknown key 'packages'" (exit 2).
    (project / "pyproject.toml").write_text('[tool.anydev]\npackages = ["myproj"]\n'
                                            'paths = ["scripts/*.py"]\n')
    assert run_cli("scan")[0] == 1
    rc, _, err = run_cli("fix", "--diff")
    assert rc == 1 and "warning" not in err


def test_discovery_anydev_toml_and_config_option(project):
    (project / "pyproject.toml").write_text("[project]\nname = 'x'\n")  # no [tool.anydev]
    sub = project / "sub"
    sub.mkdir()
    assert _config.find(str(sub)) is None
    (project / "anydev.toml").write_text('ignore = ["AD107"]\n')
    assert _config.find(str(sub)) == str(project / "anydev.toml")
    rc, out, _ = run_cli("scan", "--format", "json")
    assert ("train.py", "AD107") not in rules(out) and ("train.py", "AD103") in rules(out)
    other = project / "other.toml"
    other.write_text('select = ["AD103"]\n')
    rc, out, _ = run_cli("scan", "--format", "json", "--config", str(other))
    assert rules(out) == [("train.py", "AD103")]
    rc, _, err = run_cli("scan", "--config", "missing.toml")
    assert rc == 2 and "--config missing.toml: no such file" in err
    rc, _, err = run_cli("scan", "--config", str(other), "--no-config")
    assert rc == 2 and "exclude each other" in err
    other.write_text("select = [\n")
    rc, _, err = run_cli("scan", "--config", str(other))
    assert rc == 2 and f"{other}: not valid TOML" in err


def test_without_tomllib_a_valid_file_is_read_and_a_broken_one_says_what_to_install(
        project, monkeypatch):
    # Python 3.9 and 3.10 without tomli: anydev's own reader reads a valid
    # file; only the message for a broken one needs tomli.
    monkeypatch.setattr(_config, "_toml", lambda: None)
    monkeypatch.setattr(_config, "_cache", {})
    (project / "anydev.toml").write_text('ignore = ["AD107"]\n')
    rc, out, _ = run_cli("scan", "--format", "json")
    assert rc == 1 and "AD107" not in {rule for _, rule in rules(out)}
    (project / "anydev.toml").write_text('ignore = ["AD107"\n')
    rc, _, err = run_cli("scan")
    assert rc == 2 and "not valid TOML, and reading why needs Python 3.11 or newer" in err


# --- globs ---------------------------------------------------------------------------------


@pytest.mark.parametrize("pattern, path, expected", [
    ("*.py", "a/b/c.py", True),            # no '/': a name at any depth
    ("b", "a/b/c.py", True),               # a folder above matches
    ("b/", "a/b", False),                  # a trailing '/': folders only (a is a file here)
    ("b/", "a/b/c.py", True),
    ("a/*.py", "a/c.py", True),            # anchored
    ("a/*.py", "x/a/c.py", False),
    ("a/*.py", "a/b/c.py", False),         # '*' stays in one component
    ("a/**/*.py", "a/b/c/d.py", True),
    ("**/gen/*.py", "x/y/gen/m.py", True),
    ("/c.py", "c.py", True),
    ("/c.py", "a/c.py", False),
    ("tests/*", "tests/sub/t.py", True),   # tests/sub matches: everything below it too
    ("[ab].py", "b.py", True),
])
def test_glob_is_gitignore_style(tmp_path, pattern, path, expected):
    g = _config.Glob(pattern, str(tmp_path))
    assert g.match(str(tmp_path / path)) is expected


def test_module_globs():
    def m(pattern, module):
        return _config.match_module(_config.module_glob(pattern), module)

    assert m("myproj", "myproj") and m("myproj", "myproj.sub.x")
    assert not m("myproj", "myprojx") and not m("myproj", "other.myproj")
    assert m("myproj.*", "myproj.sub") and not m("myproj.*", "myproj")
    assert m("*.tests", "a.b.tests")          # the old fnmatch spelling still matches deep
    assert m("**.tests", "a.tests.t1") and m("quiet_*", "quiet_mod")


def test_runtime_path_globs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert _config.runtime_path_glob("*/vendor/*", None).match("/x/y/vendor/z/m.py")
    assert _config.runtime_path_glob("sub/*", None).match(str(tmp_path / "sub" / "m.py"))
    assert not _config.runtime_path_glob("sub/*", None).match("/elsewhere/sub/m.py")
    assert _config.runtime_path_glob("*.py", None).match("/any/where/m.py")


# --- the runtime readers -------------------------------------------------------------------


def test_runtime_policy_ignores_a_bad_scanner_key_and_warns_about_unknown_ones(tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "pyproject.toml").write_text('[tool.anydev]\nlegacy = "error"\nselect = 3\n'
                                         'legasy = "x"\n')
    (proj / "mod.py").write_text("import anydev.cuda\n\ndef f():\n"
                                 "    return anydev.cuda.current_device()\n")
    rc, out, err = run_python(f"""
        import sys, warnings
        sys.path.insert(0, {str(proj)!r})
        import mod
        try:
            mod.f()
        except Exception as e:
            print(type(e).__name__)
    """, env={"ANYDEV_SIM_DEVICES": "1"})
    assert rc == 0, err
    assert out.strip() == "LegacyAPIError"  # the policy applies; `select` is the scanner's
    assert "ConfigWarning" in err and "unknown key 'legasy' (did you mean 'legacy'?)" in err


def test_runtime_policy_from_anydev_toml(tmp_path):
    proj = tmp_path / "proj"
    (proj / "vendor").mkdir(parents=True)
    (proj / "anydev.toml").write_text('legacy = "error"\n[[legacy-override]]\n'
                                      'path = "vendor/"\npolicy = "ignore"\n')
    body = "import anydev.cuda\n\ndef f():\n    return anydev.cuda.current_device()\n"
    (proj / "mod.py").write_text(body)
    (proj / "vendor" / "vmod.py").write_text(body)
    rc, out, err = run_python(f"""
        import sys
        sys.path[:0] = [{str(proj)!r}, {str(proj / 'vendor')!r}]
        for name in ("mod", "vmod"):
            try:
                __import__(name).f()
                print(name, "ok")
            except Exception as e:
                print(name, type(e).__name__)
    """, env={"ANYDEV_SIM_DEVICES": "1"})
    assert rc == 0, err
    assert out.split("\n")[:2] == ["mod LegacyAPIError", "vmod ok"]


# --- per-file ignores, keep, target-torch, exit-zero ------------------------------------------


def test_per_file_ignores_and_keep(project):
    (project / "backends").mkdir()
    (project / "backends" / "cuda.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    (project / "pyproject.toml").write_text(textwrap.dedent("""\
        [tool.anydev]
        per-file-ignores = { "tests/**" = ["AD1"], "train.py" = ["AD107"] }
        keep = ["backends/"]
        """))
    rc, out, _ = run_cli("scan", "--format", "json")
    # kept code is still reported (it is legacy), and never rewritten
    assert rules(out) == [("backends/cuda.py", "AD107"), ("train.py", "AD103")]
    before = (project / "backends" / "cuda.py").read_text()
    rc, _, err = run_cli("fix", "--unsafe-fixes")
    assert (project / "backends" / "cuda.py").read_text() == before
    assert "backends/cuda.py:2:1: AD107 torch.cuda.synchronize: not fixed: kept" in err
    assert "torch.cuda.synchronize()" in (project / "train.py").read_text()  # ignored there
    assert "torch.cuda.synchronize()" in (project / "tests" / "test_x.py").read_text()
    assert "torch.accelerator.current_device_index()" in (project / "train.py").read_text()
    (project / "pyproject.toml").write_text('[tool.anydev]\nper-file-ignores = '
                                            '{ "*.py" = ["AD09"] }\n')
    rc, _, err = run_cli("scan")
    assert rc == 2 and "`per-file-ignores` '*.py'" in err and "'AD09'" in err


def test_selection_carries_target_torch_and_keep(project, monkeypatch):
    import argparse

    from anydev._cli import main as cli

    (project / "pyproject.toml").write_text('[tool.anydev]\ntarget-torch = "2.1"\n'
                                            'keep = ["backends/"]\n')
    p = cli.command_parser("fix")
    sel = _scan_cli.selection(p.parse_args([]))
    assert sel.target_torch == "2.1" and sel.keep == ["backends/"]
    assert _scan_cli.selection(p.parse_args(["--target-torch", "2.4"])).target_torch == "2.4"
    rc, _, err = run_cli("fix", "--target-torch", "two")
    assert rc == 2 and "'two' is not a PyTorch version" in err and "usage: anydev fix" in err
    assert isinstance(sel, _scan_cli.Selection) and not isinstance(sel, argparse.Namespace)


def test_target_torch_reaches_a_fixer_that_takes_it(project, monkeypatch):
    from anydev import fix as _fix

    seen = {}
    real = _fix.fix_paths

    def fix_paths(paths, *, target_torch=None, **kw):
        seen["target_torch"] = target_torch
        return real(paths, **kw)

    monkeypatch.setattr(_fix, "fix_paths", fix_paths)
    run_cli("fix", "--diff", "--target-torch", "2.1")
    assert seen == {"target_torch": "2.1"}


def test_exit_zero(project):
    assert run_cli("scan")[0] == 1
    assert run_cli("scan", "--exit-zero")[0] == 0
    assert run_cli("fix", "--diff", "--exit-zero")[0] == 0
    (project / "pyproject.toml").write_text("[tool.anydev]\nexit-zero = true\n")
    assert run_cli("scan")[0] == 0
    assert run_cli("scan", "missing.py")[0] == 2  # usage errors still exit 2


# --- unscanned parts: errors in every format, exit 1 ---------------------------------------


def test_unscanned_parts_are_errors_and_fail_the_run(project):
    for p in ("train.py", "tests/test_x.py"):
        os.remove(p)
    (project / "bin.py").write_bytes(b"import torch\x00\ntorch.cuda.synchronize()\n")
    (project / "latin.py").write_bytes(b"import torch\n# caf\xe9\ntorch.cuda.synchronize()\n")
    (project / "big.py").write_text("x = 1\n" * 100)
    rc, out, err = run_cli("scan", "--max-file-size", "200")
    assert rc == 1, (out, err)
    assert "No legacy references found" in out
    assert "bin.py:1: error: binary file" in err and "big.py: error: file is" in err
    assert "latin.py:2: error: invalid UTF-8" in err
    rc, out, _ = run_cli("scan", "--max-file-size", "200", "--format", "json")
    errors = json.loads(out)["errors"]
    assert {e["path"] for e in errors} == {"bin.py", "big.py", "latin.py"}
    assert {e["level"] for e in errors} == {"error"} and {e["kind"] for e in errors} == \
        {"unscanned"}
    rc, out, _ = run_cli("scan", "--max-file-size", "200", "--format", "sarif")
    inv = json.loads(out)["runs"][0]["invocations"][0]
    assert not inv["executionSuccessful"]
    assert [n["level"] for n in inv["toolExecutionNotifications"]] == ["error"] * 3
    rc, out, _ = run_cli("scan", "--max-file-size", "200", "--format", "github")
    assert out.count("::error file=") == 3 and rc == 1
    assert run_cli("scan", "--max-file-size", "200", "--exit-zero")[0] == 0
    (project / "pyproject.toml").write_text("[tool.anydev]\nfail-on-unscanned = false\n")
    assert run_cli("scan", "--max-file-size", "200")[0] == 0


@pytest.mark.parametrize("value", ["-1", "x"])
def test_bad_max_file_size_is_a_usage_error(project, value):
    rc, out, err = run_cli("scan", "--max-file-size", value)
    assert rc == 2 and "argument --max-file-size" in err and "usage: anydev scan" in err
    assert "Traceback" not in err


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_stdout_that_cannot_be_written_exits_2(project):
    with open("/dev/full", "w") as full:
        p = subprocess.run([*ANYDEV, "scan", "."], stdout=full, stderr=subprocess.PIPE,
                           text=True, timeout=60)
    assert p.returncode == 2, p.stderr
    assert "cannot write the report to stdout: No space left on device" in p.stderr
    assert "Traceback" not in p.stderr and "Exception ignored" not in p.stderr


# --- noqa ------------------------------------------------------------------------------------


@pytest.mark.parametrize("comment, codes", [
    ("# noqa", _noqa.ALL),
    ("# NOQA", _noqa.ALL),
    ("# noqa: AD107", ("AD107",)),
    ("#noqa:AD107,AD1", ("AD107", "AD1")),
    ("# type: ignore  # noqa: E501 AD103", ("E501", "AD103")),
    ("# noqa:", None),
    ("# noqa: because", None),
    ("# a comment", None),
])
def test_noqa_directives(comment, codes):
    assert _noqa.codes_of(comment) == codes


def test_noqa_suppresses_in_scan_and_fix(project):
    (project / "train.py").write_text(textwrap.dedent("""\
        import torch
        torch.cuda.synchronize()  # noqa: AD107
        torch.cuda.current_device()  # noqa: E501
        torch.cuda.synchronize()  # noqa
        x = "# noqa"; torch.cuda.synchronize()
        torch.cuda.synchronize()  # noqa: AD1
        """))
    rc, out, _ = run_cli("scan", "--format", "json", "train.py")
    assert [(f["line"], f["rule"]) for f in json.loads(out)["findings"]] == \
        [(3, "AD103"), (5, "AD107")]
    run_cli("fix", "train.py")
    lines = (project / "train.py").read_text().splitlines()
    assert lines[1] == "torch.cuda.synchronize()  # noqa: AD107"
    assert lines[2] == "torch.accelerator.current_device_index()  # noqa: E501"
    assert lines[4] == 'x = "# noqa"; torch.accelerator.synchronize()'


NOQA_FORMS = ["  # noqa", "  # NOQA: AD107", "  #noqa:AD1", "  # type: ignore  # noqa: AD103, E501",
              "  # noqa:", "  # NoQa: ad107", "  # a comment", "", "  # anydev: ignore[AD103]"]
NOQA_LINES = ["torch.cuda.synchronize(){c}", "x = '# noqa'; torch.cuda.current_device(){c}",
              "y = torch.cuda.synchronize(\n    1){c}", "z = (1,{c}\n     torch.cuda.synchronize())",
              's = """\n# noqa\n"""; torch.cuda.synchronize(){c}', "t = x.cuda(){c}",
              "d = torch.device('cuda'){c}", "# noqa\ntorch.cuda.synchronize()"]


def test_noqa_directives_drop_findings_without_reading_files_again(tmp_path, monkeypatch):
    """scan_paths drops the findings a `# noqa` directive covers, as
    _noqa.filter_findings does over the findings with none dropped, and the
    scanner reads the directives itself (Note [noqa directives]): no file is
    read again. iter_scan_paths drops the same."""
    import random
    from anydev import scan

    r = random.Random(14)
    every = []
    native, rows = scan._rules()
    for k in range(120):
        lines = ["import torch"]
        for _ in range(r.randint(1, 12)):
            lines.append(r.choice(NOQA_LINES).format(c=r.choice(NOQA_FORMS)))
        data = ("\n".join(lines) + "\n").encode()
        (tmp_path / f"m{k:03d}.py").write_bytes(data)
        raw = scan._native().scan_source(native, data, "python", False)[0]
        every += [scan._finding(f"m{k:03d}.py", t, rows[t[0]]) for t in raw]
    monkeypatch.chdir(tmp_path)
    expected = _noqa.filter_findings(every, _noqa.read_file)
    assert 0 < len(expected) < len(every)
    read = []
    real_read = _noqa.read_file
    monkeypatch.setattr(_noqa, "read_file", lambda p: read.append(p) or real_read(p))
    assert scan.scan_paths(["."], jobs=1).findings == expected
    streamed = [f for part in scan.iter_scan_paths(["."], jobs=1, batch=7) for f in part.findings]
    assert streamed == expected
    # The scanner read the line directives (Note [noqa directives]): no file is
    # tokenized again; only a file with findings whose bytes mention anydev (here
    # `# anydev: ignore[...]`) is read again, for a file-level `# anydev: noqa`
    # (Note [File-level noqa] in anydev/scan.py): the scanner asks the bytes.
    mention = {f.path for f in every if b"nydev" in (tmp_path / f.path).read_bytes()}
    assert mention and set(read) == mention
    # "noqa" in a string is no comment
    (tmp_path / "s.py").write_text("import torch\nx = '# noqa'; torch.cuda.synchronize()\n")
    (tmp_path / "c.py").write_text("import torch\ntorch.cuda.synchronize()  # NOqa: AD2\n")
    (tmp_path / "n.py").write_text("import torch\n")
    read.clear()
    assert [f.line for f in scan.scan_paths(["s.py", "c.py", "n.py"]).findings] == [2, 2]
    assert read == []  # the scanner read c.py's directive (its code is another rule's)
    # A file the scanner leaves to tokenize (a tab in an indent) is read again.
    (tmp_path / "t.py").write_text("import torch\nif x:\n\ttorch.cuda.synchronize()  # noqa\n")
    read.clear()
    assert scan.scan_paths(["t.py"]).findings == []
    assert "t.py" in read


# --- stdin -------------------------------------------------------------------------------------


def test_stdin_scan_and_fix(project):
    src = "import torch\ntorch.cuda.synchronize()\n"
    p = subprocess.run([*ANYDEV, "scan", "-", "--stdin-filename", "tests/t.py"], input=src,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 1 and p.stdout.startswith("tests/t.py:2:1: AD107"), p
    (project / "pyproject.toml").write_text('[tool.anydev]\nper-file-ignores = '
                                            '{ "tests/*" = ["AD1"] }\n')
    p = subprocess.run([*ANYDEV, "scan", "-", "--stdin-filename", "tests/t.py"], input=src,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p
    p = subprocess.run([*ANYDEV, "fix", "-"], input=src, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p
    assert p.stdout == "import torch\ntorch.accelerator.synchronize()\n"
    p = subprocess.run([*ANYDEV, "fix", "-", "--diff"], input=src, capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 1 and "+torch.accelerator.synchronize()" in p.stdout
    p = subprocess.run([*ANYDEV, "scan", "-", "x.py"], input=src, capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 2 and "must be the only path" in p.stderr
    p = subprocess.run([*ANYDEV, "scan", "-", "--stdin-filename", "x.txt"], input=src,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "x.txt: not a Python or C/C++" in p.stderr


# --- output: quiet, colour, show-fixes ------------------------------------------------------------


def test_quiet_colour_and_show_fixes(project):
    rc, out, _ = run_cli("scan", "--quiet")
    assert rc == 1 and "Found" not in out and "train.py:4:5: AD107" in out
    rc, out, _ = run_cli("scan", "--show-fixes")
    assert "Would fix 3 findings with `anydev fix`:" in out
    assert "- train.py:\n    1 × AD103 (torch.cuda.current_device -> " \
           "torch.accelerator.current_device_index)\n    1 × AD107 (torch.cuda.synchronize -> " \
           "torch.accelerator.synchronize)\n" in out
    env = {"FORCE_COLOR": "1"}
    rc, out, _ = run_command([*ANYDEV, "scan", "train.py"], env=env)
    assert "\033[1mtrain.py\033[0m" in out and "\033[1;31mAD107\033[0m" in out
    rc, out, _ = run_command([*ANYDEV, "scan", "train.py"], env={**env, "NO_COLOR": "1"})
    assert "\033[" not in out
    rc, out, err = run_cli("fix", "--show-fixes")
    assert "Fixed 3 findings:" in err and "- train.py:" in err


# --- the command line: version, did-you-mean, usage, completion -------------------------------


def test_version_flags():
    import anydev

    for flag in ("--version", "-V"):
        rc, out, err = run_cli(flag)
        assert rc == 0 and out.strip() == anydev.__version__


@pytest.mark.parametrize("argv, usage, message", [
    (["sacn"], "usage: anydev [-h] [-V] COMMAND", "unknown command 'sacn' (did you mean 'scan'?)"),
    (["--verison"], "usage: anydev", "(did you mean '--version'?)"),
    (["scan", "--formt", "json"], "usage: anydev scan", "(did you mean '--format'?)"),
    (["scan", "--format", "jsn"], "usage: anydev scan", "(did you mean 'json'?)"),
    (["fix", "--unsafe-fix"], "usage: anydev fix", ""),  # a prefix: argparse accepts it
    (["fix", "--unsafe-fixs"], "usage: anydev fix", "(did you mean '--unsafe-fixes'?)"),
    (["report", "shwo", "x"], "usage: anydev report", "(did you mean 'show'?)"),
    (["completion", "tcsh"], "usage: anydev completion", "invalid choice"),
])
def test_mistakes_get_a_suggestion_and_their_own_usage(argv, usage, message, project):
    rc, out, err = run_cli(*argv)
    if argv == ["fix", "--unsafe-fix"]:
        assert rc in (0, 1), err
        return
    assert rc == 2, (out, err)
    assert usage in err and message in err, err


def test_completion_scripts():
    for shell in ("bash", "zsh", "fish"):
        rc, out, err = run_cli("completion", shell)
        assert rc == 0, err
        for word in ("scan", "fix", "completion", "unsafe-fixes", "output-format", "sarif"):
            assert word in out, (shell, word)
        exe = shutil.which(shell)
        if exe:
            p = subprocess.run([exe, "-n"], input=out, capture_output=True, text=True,
                               timeout=30)
            assert p.returncode == 0, (shell, p.stderr)
    if shutil.which("bash"):
        rc, script, _ = run_cli("completion", "bash")
        p = subprocess.run(["bash", "-c", script + textwrap.dedent("""
            COMP_WORDS=(anydev sc); COMP_CWORD=1; _anydev; echo "${COMPREPLY[*]}"
            COMP_WORDS=(anydev scan --output-f); COMP_CWORD=2; _anydev; echo "${COMPREPLY[*]}"
            COMP_WORDS=(anydev scan --format ''); COMP_CWORD=3; _anydev; echo "${COMPREPLY[*]}"
            """)], capture_output=True, text=True, timeout=30)
        assert p.stdout.splitlines() == [
            "scan", "--output-format",
            "text concise full json json-lines sarif github gitlab junit"], p


def test_scan_does_not_import_the_fixer():
    rc, out, err = run_python("""
        import sys
        from anydev._cli import main as cli
        cli.main(["scan", "--help"])
        print(sorted(m for m in ("anydev.fix", "anydev._cli.fix", "anydev.scan", "json")
                     if m in sys.modules))
    """)
    assert rc == 0, err
    assert out.strip().splitlines()[-1] == "[]"


def test_unknown_rule_code_gets_a_suggestion():
    rc, _, err = run_cli("rule", "ADD101")
    assert rc == 2 and "unknown rule code 'ADD101' (did you mean 'AD101'?)" in err


def test_start_up_imports_stay_lazy():
    # What benchmarks/python/bench_startup.py measures the cost of: `import
    # anydev` without typing/collections, `--version` without argparse.
    rc, out, err = run_python("""
        import sys
        import anydev
        print(sorted(m for m in ("typing", "collections", "argparse", "dataclasses")
                     if m in sys.modules))
        from anydev._cli import main as cli
        cli.main(["--version"])
        print(sorted(m for m in ("argparse", "shutil", "anydev.scan") if m in sys.modules))
    """)
    assert rc == 0, err
    lines = out.strip().splitlines()
    assert lines[0] == "[]" and lines[2] == "[]", out


@pytest.mark.parametrize("text, parsed", [
    ('[project]\nname = "x"\ndependencies = ["torch>=2.1", "anydev>=0.1"]\n', False),
    ("[project]\ndependencies = ['anydev', \"anydev[cli] ; python_version>'3.9'\"]\n", False),
    ('[project.optional-dependencies]\ndev = ["anydev==0.1.0", "ruff"]\n', False),
    ('[tool.ruff]\nline-length = 100\n', False),
    ('[tool.ruff]\nline-length = 100\n# anydev is configured elsewhere\n', True),
    ('[tool.anydevx]\n', True),
    ('[tool.poetry.dependencies]\nanydev = "^0.1"\n', True),  # parsed: no table found
    ('[tool.anydev]\nselect = ["AD1"]\n', True),
    ('[tool . anydev]\nselect = ["AD1"]\n', True),
    ("[tool.'anydev']\nselect = [\"AD1\"]\n", True),
    ('[tool."anydev"]\n', True),
    ('[tool. "anydev" ]\n', True),
    ('[tool]\nanydev = { select = ["AD1"] }\n', True),
    ('[tool]\n"anydev" . select = ["AD1"]\n', True),
    ("[tool]\n'anydev'\t= {}\n", True),
    ('tool.anydev.select = ["AD1"]\n', True),
    ('tool = { anydev = { select = ["AD1"] } }\n', True),
    ('tool = {"anydev"={}}\n', True),
    ('[[tool.anydev]]\nselect = ["AD1"]\n', True),
    ('[tool.anydev.per-file-ignores]\n"t/**" = ["AD1"]\n', True),
    ('[tool.anydev\n', True),  # broken: parsed, and the error reported
    ('anydev', True),
    # a key spelled with escapes is "anydev" to tomllib, and no byte search sees it
    ('[tool."\\u0061nydev"]\nselect = ["AD1"]\n', True),
    ('[tool."anyd\\u0065v"]\n', True),
    ('[tool."\\U00000061nydev"]\n', True),
    ('[tool]\n"\\u0061nydev" = { select = ["AD1"] }\n', True),
    ('tool."\\u0061nyde\\u0076".select = ["AD1"]\n', True),
    ('[tool."\\x61nydev"]\n', True),  # TOML 1.1; tomllib of 3.11 refuses it
    ('[project]\ndescription = "caf\\u00e9"\n', True),  # parsed: no table found
])
def test_pyproject_without_the_table_is_not_parsed(text, parsed):
    # _config.find parses a pyproject.toml only when it may hold a
    # [tool.anydev] table: the byte check never misses a table tomllib finds.
    import tomllib

    from anydev._common import config as _config

    assert _config._may_hold_table(text.encode()) == parsed
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        assert parsed  # a broken file that mentions anydev outside a string is reported
        return
    if "anydev" in data.get("tool", {}):
        assert parsed


@pytest.mark.parametrize("key", ['"\\u0061nydev"', '"anyd\\u0065v"', '"\\U00000061nydev"'])
def test_a_table_whose_key_is_spelled_with_escapes_is_found(tmp_path, key):
    # [tool."\u0061nydev"] is [tool.anydev]: tomllib reads it so, and so must find()
    import tomllib

    text = f'[project]\nname = "x"\n\n[tool.{key}]\nselect = ["AD1"]\n'
    assert tomllib.loads(text)["tool"]["anydev"] == {"select": ["AD1"]}
    (tmp_path / "pyproject.toml").write_text(text)
    (tmp_path / "sub").mkdir()
    assert _config.find(str(tmp_path / "sub")) == str(tmp_path / "pyproject.toml")
    assert _config.load(str(tmp_path / "sub")).select == ["AD1"]


@pytest.mark.parametrize("item", ["AD107", "AD1", "ALL", "ad", "A", "1AD", "AD1A", "AD_1", "",
                                  "ÄD1", "AD١", "AD 1", "AD1\n"])
def test_rule_codes_are_checked_as_the_pattern_says(item):
    # The code check runs at every start-up with a [tool.anydev] table; it
    # does without `re`, and accepts exactly what _CODE matches.
    import re

    assert _config._is_code(item) == (re.fullmatch(_config._CODE.strip("^$"), item) is not None)


def _mutations(rng, choices, n):
    alphabet = "abcdefghijklmnopqrstuvwxyz-_é"
    for _ in range(n):
        w = list(rng.choice(tuple(choices) + ("",)))
        for _ in range(rng.randint(0, 4)):
            op, at = rng.randint(0, 2), rng.randint(0, len(w))
            if op == 0:
                w.insert(at, rng.choice(alphabet))
            elif w:
                if op == 1:
                    del w[min(at, len(w) - 1)]
                else:
                    w[min(at, len(w) - 1)] = rng.choice(alphabet)
        yield "".join(w)


def test_close_match_is_difflibs():
    # Note [Did you mean]: the same answer as difflib.get_close_matches(n=1).
    import difflib
    import random

    rng = random.Random(15)
    sets = [_config.KEY_NAMES, _config.POLICIES, ("--help", "--version"), ("", "a", "ab", "aab")]
    for _ in range(300):
        sets.append(tuple("".join(rng.choice("abcde-é") for _ in range(rng.randint(0, 8)))
                          for _ in range(rng.randint(1, 6))))
    for choices in sets:
        for word in _mutations(rng, choices, 60):
            ref = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
            assert _config.close_match(word, choices) == (ref[0] if ref else None), (word, choices)
            assert _config.close_match(word, iter(choices)) == (ref[0] if ref else None)


def test_unknown_keys_cost_little(tmp_path, monkeypatch):
    # A config of 10,000 unknown keys warns about each, with the same
    # did-you-mean difflib gives; a key unlike every known one costs no
    # SequenceMatcher (difflib made one per key: 30 us), a typo at most the
    # ones of the keys that may beat the closest, and a key of a megabyte none.
    import difflib

    made = []
    real = difflib.SequenceMatcher.set_seq2
    monkeypatch.setattr(difflib.SequenceMatcher, "set_seq2",
                        lambda self, b: (made.append(len(b)), real(self, b))[1])
    keys = [f"zq{i}xeee" for i in range(5000)] + [f"sel{i}ect" for i in range(5000)]
    (tmp_path / "anydev.toml").write_text(
        "".join(f"{k} = 1\n" for k in keys) + f"{'k' * 1_000_000} = 1\n")
    cfg = _config.load_file(str(tmp_path / "anydev.toml"))
    assert len(cfg.warnings) == 10_001
    assert cfg.warnings[0].endswith("unknown key 'zq0xeee'; ignored")
    assert cfg.warnings[5000].endswith("unknown key 'sel0ect' (did you mean 'select'?); ignored")
    assert "unknown key 'kkkk" in cfg.warnings[-1]
    made = [n for n in made if n]  # SequenceMatcher() sets an empty b first
    assert len(made) <= 5000 and max(made) < 100, len(made)
    monkeypatch.undo()
    for k, w in zip(keys[::97], cfg.warnings[::97]):
        close = difflib.get_close_matches(k, _config.KEY_NAMES, n=1, cutoff=0.6)
        assert w.endswith(f"unknown key {k!r}{f' (did you mean {close[0]!r}?)' if close else ''}"
                          "; ignored")


def test_a_huge_config_file_is_refused_unread(tmp_path):
    # A 2 GB (sparse) file given as --config was read whole and parsed, for
    # minutes; a file over MAX_CONFIG_SIZE is refused after reading that much.
    import time

    big = tmp_path / "anydev.toml"
    with open(big, "wb") as f:
        f.truncate(2 << 30)
    start = time.perf_counter()
    with pytest.raises(_config.ConfigError,
                       match=r"anydev.toml: cannot read: over 4 MiB, too large"):
        _config.load_file(str(big))
    assert time.perf_counter() - start < 5
    big.write_bytes(b"# x\n" * (_config.MAX_CONFIG_SIZE // 4))  # exactly the limit is read
    assert _config.load_file(str(big)).set == frozenset()
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "pyproject.toml").write_bytes(b"[tool.anydev]\n" +
                                                    b"#" * _config.MAX_CONFIG_SIZE)
    with pytest.raises(_config.ConfigError, match="pyproject.toml: cannot read: over 4 MiB"):
        _config.find(str(tmp_path / "p"))


def test_a_byte_order_mark_and_bare_carriage_returns_are_named(tmp_path):
    # tomllib refuses both too, with "Invalid statement (at line 1, column 1)"
    # for the mark, which names nothing one can see.
    import tomllib

    bom = tmp_path / "bom" / "anydev.toml"
    bom.parent.mkdir()
    bom.write_bytes(b'\xef\xbb\xbfselect = ["AD1"]\n')
    with pytest.raises(tomllib.TOMLDecodeError):
        tomllib.loads(bom.read_text(encoding="utf-8"))
    with pytest.raises(_config.ConfigError, match=r"anydev.toml: not valid TOML: it starts with a "
                                          r"byte-order mark \(U\+FEFF\)"):
        _config.load_file(str(bom))
    cr = tmp_path / "cr" / "anydev.toml"
    cr.parent.mkdir()
    cr.write_bytes(b'select = ["AD1"]\rignore = []\r')
    with pytest.raises(_config.ConfigError,
                       match=r"not valid TOML: .*\(it has a line that ends in a bare carriage"):
        _config.load_file(str(cr))
    crlf = tmp_path / "crlf" / "anydev.toml"
    crlf.parent.mkdir()
    crlf.write_bytes(b'select = ["AD1"]\r\nignore = [\r\n')
    with pytest.raises(_config.ConfigError) as e:
        _config.load_file(str(crlf))
    assert "carriage return" not in str(e.value)
