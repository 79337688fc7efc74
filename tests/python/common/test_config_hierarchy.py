"""Configuration per file, as ruff's (issue 32): each file takes the nearest
pyproject.toml with [tool.anydev] or anydev.toml above it, `extend` inherits
another, the target torch is each package's own, --config overrides, and
--extend-select/--extend-ignore and their keys add to the selection. Driven
through `anydev scan` and `anydev fix` on a small monorepo, as a user runs
them (Note [Configuration per file] in anydev/_cli/scan.py)."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

from conftest import run_cli

from anydev._common import config as _config

LEGACY = ("import torch\n"
          "torch.cuda.synchronize()\n"          # AD107, replacement since 2.6
          "x = torch.cuda.current_device()\n")  # AD103


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))


def found(*argv: str) -> list[tuple[str, str]]:
    rc, out, err = run_cli("scan", "--format", "json", *argv)
    assert rc in (0, 1), err
    return [(f["path"], f["rule"]) for f in json.loads(out)["findings"]]


@pytest.fixture
def mono(tmp_path, monkeypatch):
    """A monorepo: a root configuration, package a extending it, package b
    with its own anydev.toml, and a file at the top."""
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "pyproject.toml", """\
        [tool.anydev]
        ignore = ["AD103"]
        exclude = ["gen/"]
        """)
    write(tmp_path / "pkg_a" / "pyproject.toml", """\
        [project]
        name = "a"
        dependencies = ["torch>=2.1"]

        [tool.anydev]
        extend = "../pyproject.toml"
        exclude = ["vendored/"]
        """)
    write(tmp_path / "pkg_b" / "anydev.toml", 'select = ["AD103"]\n')
    for f in ("top.py", "pkg_a/src/a.py", "pkg_a/vendored/v.py", "pkg_a/gen/g.py",
              "pkg_b/b.py", "gen/g.py"):
        write(tmp_path / f, LEGACY)
    return tmp_path


def test_each_file_takes_its_nearest_configuration(mono):
    # pkg_a's own `exclude` replaces the one it inherits: its gen/ is scanned,
    # the top's gen/ is not (as ruff resolves `exclude` while it walks)
    want = [("pkg_a/gen/g.py", "AD107"), ("pkg_a/src/a.py", "AD107"), ("pkg_b/b.py", "AD103"),
            ("top.py", "AD107")]
    assert found() == want
    # the same from inside a package: the run's own keys are that folder's,
    # each file's selection and excludes still its own
    os.chdir(mono / "pkg_b")
    assert found("..") == [("../" + p, r) for p, r in want]
    # a folder the configuration above excludes is not walked into, even where a
    # configuration inside it would not exclude its files
    os.chdir(mono)
    write(mono / "gen" / "anydev.toml", "")
    assert found() == want


def test_config_option_gives_every_file_one_configuration(mono):
    assert found("--config", "pkg_b/anydev.toml") == [
        ("gen/g.py", "AD103"), ("pkg_a/gen/g.py", "AD103"), ("pkg_a/src/a.py", "AD103"),
        ("pkg_a/vendored/v.py", "AD103"), ("pkg_b/b.py", "AD103"), ("top.py", "AD103")]
    assert len(found("--no-config")) == 12


def test_extend_inherits_and_keeps_the_base_folder_of_each_key(mono):
    cfg = _config.load_file(str(mono / "pkg_a" / "pyproject.toml")).check()
    assert cfg.ignore == ["AD103"] and cfg.base("ignore") == str(mono)
    assert cfg.exclude == ["vendored/"] and cfg.base("exclude") == str(mono / "pkg_a")
    assert cfg.extend == str(mono / "pyproject.toml")
    # an inherited relative path is the extended file's: its baseline there
    write(mono / "pyproject.toml", '[tool.anydev]\nbaseline = "b.json"\n')
    cfg = _config.load_file(str(mono / "pkg_a" / "pyproject.toml")).check()
    assert cfg.baseline == str(mono / "b.json")
    # the cache sees a change of the extended file
    write(mono / "pyproject.toml", '[tool.anydev]\nignore = ["AD107"]\n')
    assert _config.load_file(str(mono / "pkg_a" / "pyproject.toml")).ignore == ["AD107"]


def test_extend_select_and_ignore_add_up_along_the_chain(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "base.toml", 'select = ["AD1"]\nextend-select = ["AD201"]\n'
                                  'extend-ignore = ["AD107"]\n')
    write(tmp_path / "anydev.toml", 'extend = "base.toml"\nextend-select = ["AD911"]\n')
    cfg = _config.load_file("anydev.toml").check()
    assert cfg.select == ["AD1"] and cfg.extend_select == ["AD201", "AD911"]
    assert cfg.extend_ignore == ["AD107"]
    # a select of its own starts afresh: the extended file's extend-select goes
    write(tmp_path / "anydev.toml", 'extend = "base.toml"\nselect = ["AD2"]\n')
    cfg = _config.load_file("anydev.toml").check()
    assert cfg.select == ["AD2"] and cfg.extend_select == [] and cfg.extend_ignore == ["AD107"]
    # and through the command line
    write(tmp_path / "m.py", "import torch\ntorch.cuda.synchronize()\ntorch.cuda.empty_cache()\n"
                             "torch.cuda.get_device_name()\n")
    write(tmp_path / "anydev.toml", 'extend = "base.toml"\n')
    assert found() == [("m.py", "AD201")]  # AD1 less AD107, plus AD201
    assert found("--extend-select", "AD911") == [("m.py", "AD201"), ("m.py", "AD911")]
    assert found("--extend-ignore", "AD201") == []
    assert found("--select", "AD1,AD2") == [("m.py", "AD201")]  # AD107 still ignored
    assert found("--select", "AD1,AD2", "--extend-ignore", "AD2") == []


def test_the_editor_server_selects_what_the_command_line_does(tmp_path, monkeypatch):
    """The editor server's settings (anydev._migrate.check.settings) take
    extend-select and extend-ignore as `anydev scan` does: one rule filter."""
    import argparse

    from anydev._cli.scan import rule_selection
    from anydev._migrate import check as _check
    from anydev._migrate.scan_table import NATIVE

    monkeypatch.chdir(tmp_path)
    write(tmp_path / "base.toml", 'select = ["AD1"]\nextend-select = ["AD201"]\n'
                                  'extend-ignore = ["AD107"]\n')
    write(tmp_path / "anydev.toml", 'extend = "base.toml"\nextend-select = ["AD911"]\n')
    cfg = _config.load_file("anydev.toml").check()
    server = _check.settings(cfg).rules
    cli = rule_selection(cfg, argparse.Namespace())
    codes = [t[0] for t in NATIVE]
    assert [c for c in codes if server(c)] == [c for c in codes if cli(c)]
    assert server("AD201") and server("AD911") and server("AD103") and not server("AD107")
    # --select drops the file's extend-select, for both
    over = _check.settings(cfg, select=["AD2"]).rules
    assert over("AD201") and not over("AD911") and not over("AD103")
    # per-file-ignores an extended file gives are relative to that file's folder, for both
    write(tmp_path / "base.toml", 'per-file-ignores = { "gen/*.py" = ["AD1"] }\n')
    write(tmp_path / "app" / "anydev.toml", 'extend = "../base.toml"\n')
    cfg = _config.load_file(str(tmp_path / "app" / "anydev.toml")).check()
    from anydev._cli.scan import per_file_ignores

    gen, app = str(tmp_path / "gen" / "m.py"), str(tmp_path / "app" / "gen" / "m.py")
    for pfi in (_check.settings(cfg).per_file_ignores, per_file_ignores(cfg)):
        [(glob, drops)] = pfi
        assert glob.match(gen) and not glob.match(app) and drops("AD107")


@pytest.mark.parametrize("body, message", [
    ('extend = "nothere.toml"', "nothere.toml: cannot read"),
    ('extend = "anydev.toml"', "`extend`: a cycle: anydev.toml -> anydev.toml"),
    ('extend = "other.toml"', "a cycle: anydev.toml -> other.toml -> anydev.toml"),
    ('ignore = "AD107"', '`ignore` must be a list of strings, not the string \'AD107\': '
                         'write ["AD107"]'),
    ('extend-select = ["AD1?"]', "'AD1?' is not a rule code"),
])
def test_bad_extend_and_code_lists_are_errors_naming_the_file(tmp_path, monkeypatch, body,
                                                              message):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "other.toml", 'extend = "anydev.toml"\n')
    write(tmp_path / "anydev.toml", body + "\n")
    write(tmp_path / "m.py", LEGACY)
    rc, out, err = run_cli("scan")
    assert rc == 2 and out == "", err
    assert err.startswith(f"anydev scan: {tmp_path / 'anydev.toml'}: ") and message in err, err


def test_a_bad_nested_configuration_is_an_error_naming_it(mono):
    write(mono / "pkg_b" / "anydev.toml", 'select = ["AD103"]\nignore = "AD1"\n')
    rc, out, err = run_cli("scan")
    assert rc == 2 and str(mono / "pkg_b" / "anydev.toml") in err and "`ignore`" in err
    # outside the package the file is not read
    assert run_cli("scan", "top.py")[0] == 1


def test_each_package_gets_its_own_target_torch(mono):
    # package a declares torch>=2.1 (no AD107 rewrite: its replacement is 2.6's),
    # package b sets target-torch 2.6 in its anydev.toml, the top declares nothing:
    # the oldest release the table knows (Note [The oldest release])
    write(mono / "pkg_b" / "anydev.toml", 'target-torch = "2.6"\n')
    rc, out, err = run_cli("fix", "--diff")
    assert "pkg_a/src/a.py:2:1: AD107 torch.cuda.synchronize: not fixed: needs torch >= 2.6 " \
           "(target 2.1)" in err, err
    assert "+++ b/pkg_b/b.py" in out and "+torch.accelerator.synchronize()" in out
    assert "+++ b/pkg_a/src/a.py" not in out and "+++ b/top.py" not in out
    assert "target torch 2.1 (from" in err and "pkg_b/anydev.toml: target-torch)" in err
    rc, out, _ = run_cli("scan", "--statistics")
    assert "At each file's target torch (1.13 in 1 file, 2.1 in 2 files, 2.6 in 1 file): " \
           "1 of 5 findings with a fix can be applied." in out, out
    doc = json.loads(run_cli("scan", "--statistics", "--format", "json")[1])
    assert doc["target"]["applicable"] == 1 and doc["target"]["with_fix"] == 5
    assert sorted(t["torch"] for t in doc["target"]["targets"]) == ["1.13", "2.1", "2.6"]
    # --target-torch still decides for every file
    rc, out, err = run_cli("fix", "--diff", "--target-torch", "2.6")
    assert "+++ b/pkg_a/src/a.py" in out and "needs torch >= 2.6 (target" not in err
    assert "target torch 2.6 (from --target-torch)" in err


def test_runtime_policy_reads_what_extend_inherits(tmp_path, run_python):
    write(tmp_path / "pyproject.toml", '[tool.anydev]\nlegacy = "error"\n')
    write(tmp_path / "app" / "anydev.toml", 'extend = "../pyproject.toml"\n')
    cfg = _config.load_file(str(tmp_path / "app" / "anydev.toml")).check(("legacy",))
    assert cfg.legacy == "error"
