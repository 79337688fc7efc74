"""What a user installing anydev relies on: one version everywhere the docs
name it, the demo's project inside the installed package, a pre-commit hook
that sees every file the scanner reads, a source build that says what to
install when Abseil is missing, and the licence that pyproject declares.

The package under test is itself the shipped artefact: tools/setup.sh
installs the manylinux wheel that auditwheel repaired (Abseil bundled), and
tools/test.sh tries that wheel again in a fresh venv with Debian's libraries
hidden (tools/test_wheels.sh); the other Pythons' wheels are the CI job
tools/build_wheels.sh + tools/test_wheels.sh (docs/install.md)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

import anydev
from anydev import scan

from conftest import clean_env, run_command

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ANYDEV = [sys.executable, "-m", "anydev"]


def read(path: str) -> str:
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


def pyproject_version() -> str:
    m = re.search(r'^version = "([^"]+)"', read("pyproject.toml"), re.M)
    assert m, "pyproject.toml has no [project] version"
    return m.group(1)


def test_one_version_everywhere():
    version = pyproject_version()
    assert re.fullmatch(r"\d+\.\d+\.\d+", version), f"{version}: not MAJOR.MINOR.PATCH"
    cmake = re.search(r"project\(anydev VERSION (\S+)", read("CMakeLists.txt"))
    assert cmake and cmake.group(1) == version, "CMakeLists.txt project(VERSION) differs"
    assert anydev.__version__ == version, "the installed package is another version"
    assert anydev._C._version() == version, "libanydev was built as another version"
    # The newest release heading of the changelog is this version.
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+)\]", read("CHANGELOG.md"), re.M)
    assert releases and releases[0] == version, f"CHANGELOG.md's newest release: {releases[:1]}"
    # Every release tag the docs name is v<version>.
    tag = f"v{version}"
    for path in (".pre-commit-hooks.yaml", "docs/ci/github-workflow.yml", "docs/ci.md",
                 "docs/install.md", "CONTRIBUTING.md"):
        text = read(path)
        tags = set(re.findall(r"(?:rev: |@)(v\d+\.\d+\.\d+)", text))
        assert tags == {tag}, f"{path} names {sorted(tags)}, expected {tag}"


def _installed_wheel_tags() -> list[str]:
    from importlib import metadata

    dist = metadata.distribution("anydev")
    wheel = dist.read_text("WHEEL") or ""
    return re.findall(r"^Tag: (\S+)$", wheel, re.M)


def test_the_installed_wheel_loads_only_its_own_abseil():
    """A repaired (manylinux) wheel brings its Abseil libraries in
    anydev.libs/ (or links Abseil statically, ANYDEV_ABSL_SOURCE_DIR):
    importing the extension never maps a system copy."""
    tags = _installed_wheel_tags()
    if not any("manylinux" in t for t in tags):
        pytest.skip(f"anydev was not installed from a repaired wheel (tags {tags}); "
                    "tools/setup.sh installs one")
    code = ("import anydev, anydev._C\n"
            "print(open('/proc/self/maps').read())")
    p = subprocess.run([sys.executable, "-c", code], env=clean_env(None),
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    absl = sorted({line.split()[-1] for line in p.stdout.splitlines()
                   if "libabsl_" in line.rsplit("/", 1)[-1]})
    libs = os.path.realpath(os.path.join(os.path.dirname(anydev.__file__), "..", "anydev.libs"))
    outside = [path for path in absl if os.path.dirname(os.path.realpath(path)) != libs]
    assert not outside, f"Abseil loaded from outside the wheel: {outside}"


def test_version_loads_no_runtime():
    # `anydev --version` and anydev.__version__ answer without loading anydev._C
    # (libanydev and its Abseil libraries cost more than a one-file scan).
    code = ("import sys, anydev; v = anydev.__version__; "
            "from anydev._cli import main; main.main(['--version']); "
            "print(sorted(m for m in sys.modules if m.startswith('anydev._C')))")
    rc, out, err = run_command([sys.executable, "-c", code])
    assert rc == 0, err
    assert out.split() == [anydev.__version__, "[]"]


def test_version_command_matches_the_package():
    rc, out, err = run_command([*ANYDEV, "version"])
    assert rc == 0, err
    assert anydev.__version__ in out


def test_demo_runs_from_the_installed_package(tmp_path):
    """`anydev demo` from a folder that is not the repository: the example
    project ships in the package, and nothing is written beside it."""
    packaged = os.path.join(os.path.dirname(anydev.__file__), "examples", "legacy_project")
    assert os.path.isfile(os.path.join(packaged, "legacy_app", "train.py"))
    before = sorted(os.walk(packaged))
    p = subprocess.run([*ANYDEV, "demo", "--steps", "1"], cwd=str(tmp_path), env=clean_env(None),
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert p.stdout.rstrip().splitlines()[-1] == "ok"
    assert "+    torch.accelerator.set_device_index(index)" in p.stdout
    assert sorted(os.walk(packaged)) == before, "the demo wrote into the installed package"
    assert os.listdir(tmp_path) == []


def _hook_file_patterns() -> dict[str, str]:
    """Each hook of .pre-commit-hooks.yaml with its `files` pattern."""
    hooks: dict[str, str] = {}
    current = None
    for line in read(".pre-commit-hooks.yaml").splitlines():
        if m := re.match(r"- id: (\S+)", line):
            current = m.group(1)
        elif (m := re.match(r"\s+files: '(.+)'$", line)) and current:
            hooks[current] = m.group(1)
    return hooks


def test_pre_commit_hooks_see_every_file_the_scanner_reads():
    hooks = _hook_file_patterns()
    assert set(hooks) == {"anydev-scan", "anydev-scan-system", "anydev-scan-new",
                          "anydev-scan-new-system"}
    text = read(".pre-commit-hooks.yaml")
    assert "language: system" in text and "language: python" in text
    extensions = [e for exts in scan.EXTENSIONS.values() for e in exts]
    extensions += scan.NOTEBOOK_EXTENSIONS  # their code cells are scanned too
    assert ".pyi" in extensions and ".hip" in extensions and ".ipynb" in extensions
    for hook, pattern in hooks.items():
        for ext in extensions:
            assert re.search(pattern, f"src/kernels/a{ext}"), f"{hook} skips {ext} files"
        for other in ("README.md", "setup.cfg", "a.pyc", "a.cuda.txt"):
            assert not re.search(pattern, other), f"{hook} takes {other}"


def test_license_is_the_declared_one():
    assert 'license = { text = "Apache-2.0" }' in read("pyproject.toml")
    text = read("LICENSE")
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text


def test_setup_reads_the_pins_through_pip():
    """tools/setup.sh installs tools/requirements-dev.txt with pip (which
    enforces `==`), and the Debian packages it installs are all used."""
    setup = read("tools/setup.sh")
    assert "-r \"$req\"" in setup and "req=tools/requirements-dev.txt" in setup
    assert "torch==2.13.0" in read("tools/requirements-dev.txt").split()
    for unused in ("libtomlplusplus-dev", "nlohmann-json3-dev", "libcli11-dev"):
        assert unused not in setup


@pytest.mark.skipif(shutil.which("cmake") is None, reason="no cmake on PATH")
def test_source_build_without_abseil_names_the_package(tmp_path):
    """Configuring with no Abseil to be found stops with what to install."""
    r = subprocess.run(
        ["cmake", "-S", ROOT, "-B", str(tmp_path / "b"), "-DCMAKE_DISABLE_FIND_PACKAGE_absl=ON",
         "-DANYDEV_BUILD_TESTS=OFF", "-DANYDEV_BUILD_BENCHMARKS=OFF",
         "-DANYDEV_ENABLE_CUDA=OFF", "-DANYDEV_ENABLE_HIP=OFF", "-DANYDEV_ENABLE_LEVEL_ZERO=OFF"],
        capture_output=True, text=True, timeout=300)
    assert r.returncode != 0
    err = " ".join(r.stderr.split())
    assert "anydev needs Abseil" in err
    assert "apt-get install libabsl-dev" in err
    assert "ANYDEV_ABSL_SOURCE_DIR" in err


@pytest.mark.skipif(shutil.which("cmake") is None, reason="no cmake on PATH")
def test_a_bad_abseil_source_dir_is_named(tmp_path):
    r = subprocess.run(
        ["cmake", "-S", ROOT, "-B", str(tmp_path / "b"), f"-DANYDEV_ABSL_SOURCE_DIR={tmp_path}",
         "-DANYDEV_BUILD_TESTS=OFF", "-DANYDEV_BUILD_BENCHMARKS=OFF"],
        capture_output=True, text=True, timeout=300)
    assert r.returncode != 0
    assert f"ANYDEV_ABSL_SOURCE_DIR={tmp_path} is not an Abseil source tree" in " ".join(r.stderr.split())
