"""<anydev/torch_deprecations.h> against the real PyTorch headers, and the
build-log reader of ``anydev report``.

The legacy extension source (tests/fixtures/cpp_ext/legacy_calls.cpp) calls
every deprecated c10::cuda / at::cuda function the header covers; each line
with a call ends with the rules expected there (``// AD705 AD625``). It is
compiled once per compiler (g++, clang++, nvcc; a missing one skips with the
reason) against the installed PyTorch's headers, with CUDA's headers from the
toolkit (``$CUDA_HOME``, else /usr/local/cuda) and the test-only stand-ins of
tests/fixtures/cpp_ext/include for what a CPU wheel and a toolkit without
cuBLAS lack. Compiles only: nothing is linked or run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from anydev._migrate import build_log as _build_log
from anydev import cpp_extension, report
from anydev._compat.table import ROWS_BY_CODE

from conftest import run_cli, run_python

REPO = Path(__file__).resolve().parents[3]
FIXTURE = REPO / "tests" / "fixtures" / "cpp_ext"
LEGACY = FIXTURE / "legacy_calls.cpp"
CLEAN = FIXTURE / "clean_calls.cpp"
STANDINS = FIXTURE / "include"
CUDA_HOME = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda"))

sys.path.insert(0, str(REPO / "compat_map"))
import generate  # noqa: E402  (the table's generator: rows with their redeclarations)

torch_ext = pytest.importorskip("torch.utils.cpp_extension",
                                reason="PyTorch is not installed (tools/setup.sh installs 2.13)")
import torch  # noqa: E402

TORCH_RELEASE = tuple(int(x) for x in re.findall(r"\d+", torch.__version__)[:2])
TORCH_INCLUDE = Path(torch_ext.include_paths()[0])


def _table():
    table = generate.load_table()
    generate.validate(table)
    return table


def _compiler(name: str) -> str:
    path = shutil.which(name) or (str(CUDA_HOME / "bin" / name) if name == "nvcc" and
                                  (CUDA_HOME / "bin" / name).exists() else None)
    if path is None:
        pytest.skip(f"{name} is not installed (clang++: `apt-get install clang`, which "
                    f"tools/setup.sh does; nvcc: the CUDA toolkit)")
    if not (CUDA_HOME / "include" / "cuda_runtime_api.h").exists():
        pytest.skip(f"CUDA's headers are not in {CUDA_HOME}/include (set CUDA_HOME)")
    return path


def _command(compiler: str, source: Path, *, werror: bool = False) -> list[str]:
    """The compile command, as each set-up of docs/compat.md gives it: g++
    with anydev.cpp_extension's `cxx` flags, nvcc with its `nvcc` flags,
    clang++ with the plain -include/-isystem flags."""
    name = os.path.basename(compiler)
    args = cpp_extension.extra_compile_args()
    if name == "nvcc":
        cmd = [compiler, "-std=c++17", "-x", "cu", "-c", "-o", os.devnull, *args["nvcc"]]
        if werror:
            cmd += ["-Xcompiler", "-Werror,-Wall,-Wextra", "--Werror", "all-warnings"]
    else:
        flags = args["cxx"] if name.startswith("g++") else cpp_extension.include_flags()
        cmd = [compiler, "-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", *flags]
        if werror:
            cmd.append("-Werror")
    return cmd + ["-isystem", str(CUDA_HOME / "include"), "-isystem", str(STANDINS),
                  os.path.relpath(source, REPO)]


_logs: dict[str, subprocess.CompletedProcess] = {}


def compile_legacy(name: str) -> subprocess.CompletedProcess:
    """Compiles the legacy source once per compiler per session (from the
    repository root, so the log names it by its relative path)."""
    if name not in _logs:
        cmd = _command(_compiler(name), LEGACY)
        _logs[name] = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600)
    p = _logs[name]
    assert p.returncode == 0, p.stderr[-4000:]
    return p


def expected_sites() -> list[tuple[int, str]]:
    """(line, rule) of every `// ADxxx` marker of the legacy source."""
    out = []
    for n, line in enumerate(LEGACY.read_text().splitlines(), 1):
        m = re.search(r"//((?:\s+AD\d{3})+)\s*$", line)
        if m and "#include" not in line:
            out += [(n, code) for code in m.group(1).split()]
    return sorted(out)


COMPILERS = ["g++", "clang++", "nvcc"]


# --- the table's declarations against the installed headers -------------------------


def _normalize(decl: str, name: str) -> str:
    """A declaration's text without export macros, `inline`/`static`, default
    arguments, a body and spacing: what must match between the table and a
    header."""
    text = re.sub(r"\b(C10_CUDA_API|C10_XPU_API|TORCH_CUDA_CPP_API|TORCH_API|inline|static|"
                  r"__inline__)\b", " ", decl)
    head, _, rest = text.partition(f"{name}(")
    depth, params, tail = 0, "", ""
    for i, ch in enumerate(rest):
        if ch == "(":
            depth += 1
        elif ch == ")":
            if depth == 0:
                params, tail = rest[:i], rest[i + 1:]
                break
            depth -= 1
    parts, depth, cur = [], 0, ""
    for ch in params:  # split at top-level commas, then drop default arguments
        depth += {"(": 1, "{": 1, "<": 1, ")": -1, "}": -1, ">": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    params = ",".join(p.split("=")[0] for p in parts + [cur])
    tail = re.split(r"[{;]", tail)[0]
    out = f"{head} {name}({params}) {tail}"
    out = re.sub(r"\s+", " ", out).strip()
    return re.sub(r"\s*([(),*&<>])\s*", r"\1", out)


def header_declarations(header: Path, name: str) -> list[str]:
    """Every declaration or definition of function `name` in a header, normalized."""
    text = re.sub(r"//[^\n]*|/\*.*?\*/", " ", header.read_text(), flags=re.S)
    out = []
    for m in re.finditer(rf"(?<![\w:.>]){re.escape(name)}\s*\(", text):
        start = max(text.rfind(c, 0, m.start()) for c in ";{}") + 1
        start = max(start, text.rfind("\n#", 0, m.start()) + 1)
        depth, close = 1, m.end()
        while close < len(text) and depth:  # the `)` that closes the parameter list
            depth += {"(": 1, ")": -1}.get(text[close], 0)
            close += 1
        end = min((i for i in (text.find(";", close), text.find("{", close)) if i >= 0),
                  default=len(text))
        stmt = text[start:end].replace(f"{name} (", f"{name}(")
        if "return" in stmt or "=" in stmt.split(f"{name}(")[0]:
            continue  # a call, not a declaration
        out.append(_normalize(stmt, name))
    return out


def _in_range(item: dict) -> bool:
    lo, hi = generate.torch_range(item["torch"])
    return lo <= TORCH_RELEASE <= hi


def test_every_declaration_matches_the_installed_headers():
    table = _table()
    checked = 0
    for row in generate.redeclared_rows(table)[0]:
        name = row.legacy.rpartition("::")[2]
        for item in row.redeclare:
            if not _in_range(item):
                continue
            found = header_declarations(TORCH_INCLUDE / item["header"], name)
            want = _normalize(item["decl"], name)
            assert want in found, (row.source, want, found)
            checked += 1
    if checked == 0:
        pytest.skip(f"no declaration of the table is for PyTorch {torch.__version__}")
    assert checked >= 40


def test_the_matcher_fails_on_a_wrong_signature():
    header = TORCH_INCLUDE / "c10/cuda/CUDAFunctions.h"
    found = header_declarations(header, "device_count")
    assert _normalize("DeviceIndex device_count() noexcept", "device_count") in found
    assert _normalize("DeviceIndex device_count()", "device_count") not in found
    assert _normalize("int device_count() noexcept", "device_count") not in found


def test_every_covered_cuda_row_is_called_by_the_legacy_source():
    covered, not_covered = generate.redeclared_rows(_table())
    cuda = {r.code for r in covered if r.legacy.startswith(("c10::cuda::", "at::cuda::"))}
    assert cuda <= {rule for _, rule in expected_sites()}
    # What the header does not cover, and why: the classes and one call.
    assert {r.kind for r, _ in not_covered} == {"class", "call"}
    assert [r.code for r, _ in not_covered if r.kind == "call"] == ["AD807"]


# --- compiling the legacy and the migrated source ------------------------------------


@pytest.mark.parametrize("name", COMPILERS)
def test_each_legacy_call_warns_at_its_line(name: str):
    p = compile_legacy(name)
    diags = _build_log.parse(p.stderr)
    got = sorted((d.line, d.rule) for d in diags if d.file.endswith("legacy_calls.cpp"))
    assert got == expected_sites(), p.stderr[-4000:]
    # Nothing else warns: no diagnostic outside the legacy source.
    assert all(d.file == "tests/fixtures/cpp_ext/legacy_calls.cpp" for d in diags)
    assert " warning: " not in "\n".join(
        line for line in p.stderr.splitlines() if "deprecated" not in line and "legacy_calls" in line)
    # The message names the replacement, as the table does.
    for line in p.stderr.splitlines():
        m = re.search(r"deprecated: use (\S+) \[(AD\d{3})\]", line)
        if m:
            assert m.group(1) == ROWS_BY_CODE[m.group(2)].replacement


# The note the header prints once per compile (Note [Say once what is marked]
# in compat_map/generate.py); Clang labels it a warning, -Werror leaves it one.
SAYS = "anydev/torch_deprecations.h: PyTorch "


def _notes(stderr: str) -> list[str]:
    """The header's notes in a compiler's output (not the echoed source line)."""
    return [line for line in stderr.splitlines() if SAYS in line and "#pragma message(" not in line]


def _without_the_note(stderr: str) -> str:
    """The compiler's output without the header's note and what comes with it
    (the echoed pragma, its caret, where it was included, Clang's count)."""
    return "\n".join(
        line for line in stderr.splitlines()
        if SAYS not in line and not re.fullmatch(r"[\s|^0-9]*", line)
        and not line.startswith("In file included from <")
        and line.strip() != "1 warning generated.")


@pytest.mark.parametrize("name", COMPILERS)
def test_code_without_legacy_calls_compiles_with_werror(name: str):
    cmd = _command(_compiler(name), CLEAN, werror=True)
    p = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-4000:]
    assert "warning" not in _without_the_note(p.stderr), p.stderr[-4000:]
    if name != "nvcc":  # nvcc's front end is not given the pragma
        assert len(_notes(p.stderr)) == 1, p.stderr[-4000:]
        note = next(line for line in p.stderr.splitlines() if SAYS in line)
        assert "marks the legacy calls of c10::cuda c10::cuda::CUDACachingAllocator at::cuda" \
            in note, note
        assert "not c10::xpu (needs sycl/sycl.hpp" in note, note


@pytest.mark.parametrize("name", ["g++", "clang++"])
def test_the_header_never_changes_whether_a_source_compiles(name: str, tmp_path: Path):
    """A source that includes a header that is not there fails with the
    header force-included as without it. GCC 12 let such an #include pass in
    silence after the header's __has_include looked for the same name (GCC PR
    80753); its probes now spell <./name> (Note [Probes that do not taint])."""
    compiler = shutil.which(name)
    if compiler is None:
        pytest.skip(f"{name} is not installed")
    results = {}
    for missing in ("cuda_runtime_api.h", "sycl/sycl.hpp", "cusolverDn.h",
                    "torch/headeronly/version.h"):
        src = tmp_path / "legacy.cpp"
        src.write_text(f"#include <{missing}>\nint main() {{ return 0; }}\n")
        base = [compiler, "-std=c++17", "-fsyntax-only", "-isystem", str(TORCH_INCLUDE), str(src)]
        without = subprocess.run(base, capture_output=True, text=True, timeout=120)
        with_header = subprocess.run(base[:1] + ["-include", cpp_extension.header()] + base[1:],
                                     capture_output=True, text=True, timeout=120)
        if missing == "torch/headeronly/version.h" and without.returncode == 0:
            continue  # this PyTorch ships it: nothing to test with it
        results[missing] = (without.returncode != 0, with_header.returncode != 0)
    assert results and all(v == (True, True) for v in results.values()), results


def test_the_note_is_quiet_when_asked_and_absent_in_c(tmp_path: Path):
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("g++ is not installed")
    src = tmp_path / "x.cpp"
    src.write_text("int main() { return 0; }\n")
    flags = cpp_extension.include_flags()
    p = subprocess.run([gxx, "-std=c++17", "-fsyntax-only", *flags, str(src)],
                       capture_output=True, text=True, timeout=120)
    assert len(_notes(p.stderr)) == 1, p.stderr
    p = subprocess.run([gxx, "-std=c++17", "-fsyntax-only", "-DANYDEV_TORCH_DEPRECATIONS_QUIET",
                        *flags, str(src)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and SAYS not in p.stderr, p.stderr


def test_a_release_outside_the_ranges_gets_no_redeclaration(tmp_path: Path):
    """The version guard: the same headers announced as PyTorch 2.12 (a
    torch/headeronly/version.h found first) compile the legacy source with
    no warning at all, and without error."""
    gxx = _compiler("g++")
    fake = tmp_path / "torch" / "headeronly"
    fake.mkdir(parents=True)
    (fake / "version.h").write_text("#pragma once\n#define TORCH_VERSION_MAJOR 2\n"
                                    "#define TORCH_VERSION_MINOR 12\n")
    cmd = _command(gxx, LEGACY)
    cmd[1:1] = ["-isystem", str(tmp_path)]
    p = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-4000:]
    assert _build_log.parse(p.stderr) == [] and "warning" not in p.stderr, p.stderr[-4000:]
    assert "PyTorch 2.12: marks nothing; not c10::cuda (not recorded for this PyTorch release)" \
        in p.stderr, p.stderr[-4000:]


def test_the_header_is_inert_without_cuda(tmp_path: Path):
    """No CUDA on the include path (a CPU-only build), and C: the header
    includes and declares nothing, and the file compiles with -Werror."""
    gxx = shutil.which("g++")
    gcc = shutil.which("gcc")
    if gxx is None or gcc is None:
        pytest.skip("g++/gcc is not installed")
    src = tmp_path / "cpu.cpp"
    src.write_text("#ifdef C10_CUDA_API\n#error c10/cuda was included\n#endif\n"
                   "namespace c10::cuda { int device_count(); }  // not PyTorch's: no clash\n"
                   "int f() { return c10::cuda::device_count(); }\n")
    flags = cpp_extension.include_flags()
    p = subprocess.run([gxx, "-std=c++17", "-fsyntax-only", "-Wall", "-Werror", *flags, str(src)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    # It says so, once: a CPU wheel's headers mark nothing, and why.
    assert len(_notes(p.stderr)) == 1, p.stderr
    assert "marks nothing; not c10::cuda (needs cuda_runtime_api.h" in p.stderr, p.stderr
    c = tmp_path / "plain.c"
    c.write_text("int g(void) { return 1; }\n")
    p = subprocess.run([gcc, "-fsyntax-only", "-Wall", "-Werror", "-include",
                        cpp_extension.header(), str(c)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stderr == "", p.stderr  # C: nothing to say


def test_cmake_function_forces_the_header_into_a_target(tmp_path: Path):
    cmake = shutil.which("cmake")
    ninja = shutil.which("ninja")
    gxx = shutil.which("g++")
    if not (cmake and ninja and gxx):
        pytest.skip("cmake, ninja or g++ is not installed")
    _compiler("g++")
    module = Path(cpp_extension.cmake_dir()) / "AnydevTorchDeprecations.cmake"
    assert module.is_file(), "the installed package lacks its CMake module"
    project = tmp_path / "ext"
    project.mkdir()
    includes = " ".join(f'"{p}"' for p in torch_ext.include_paths())
    (project / "CMakeLists.txt").write_text(f"""
cmake_minimum_required(VERSION 3.18)
project(legacy_ext CXX)
set(CMAKE_CXX_STANDARD 17)
set(TORCH_INCLUDE_DIRS {includes})  # as find_package(Torch) sets it
include("{module}")
add_library(legacy_ext OBJECT "{LEGACY}")
target_include_directories(legacy_ext SYSTEM PRIVATE "{CUDA_HOME}/include" "{STANDINS}")
anydev_deprecate_legacy_torch(legacy_ext)
""")
    build = tmp_path / "build"
    p = subprocess.run([cmake, "-S", str(project), "-B", str(build), "-G", "Ninja",
                        f"-DCMAKE_CXX_COMPILER={gxx}"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    p = subprocess.run([cmake, "--build", str(build)], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    # Ninja runs the compiler in the build folder, and CMake may name the source
    # relative to it: --build-dir resolves such paths.
    diags = _build_log.parse(p.stdout + p.stderr, str(build))
    assert sorted((d.line, d.rule) for d in diags) == expected_sites()
    assert {os.path.realpath(d.file) for d in diags} == {os.path.realpath(LEGACY)}


# --- the build log in the report ------------------------------------------------------


def _sites(rep: dict) -> set[tuple[str, int, str, str]]:
    return {(c["file"], c["line"], c["legacy"], c["rule"]) for c in rep["calls"]}


@pytest.mark.parametrize("name", COMPILERS)
def test_the_report_of_a_build_log_equals_the_scan(name: str, tmp_path: Path, monkeypatch):
    p = compile_legacy(name)
    monkeypatch.chdir(REPO)
    build = _build_log.to_report(_build_log.parse(p.stderr), "build.log")
    scan = _build_log.from_scan([os.path.relpath(LEGACY, REPO)])
    assert _sites(build) == _sites(scan)
    # The spelling is the source's (at::cuda::getCurrentCUDAStream at line 44,
    # the alias cu:: at line 63), not only the c10::cuda entity the compiler names.
    legacy = {(c["line"], c["legacy"]) for c in build["calls"]}
    assert (44, "at::cuda::getCurrentCUDAStream") in legacy
    assert (59, "emptyCache") in legacy or (59, "c10::cuda::CUDACachingAllocator::emptyCache") \
        in legacy
    # Two diagnostics at line 43? No: one each; two rules at line 63.
    assert {c["rule"] for c in build["calls"] if c["line"] == 63} == {"AD625", "AD705"}
    report.validate(build)
    merged = _build_log.combine([build, scan])
    assert all(c["seen_by"] == {"build": 1, "scan": 1} for c in merged["calls"]), merged["calls"]


def test_anydev_report_reads_a_build_log_with_the_scan_and_a_runtime_report(
        tmp_path: Path, monkeypatch):
    p = compile_legacy("g++")
    monkeypatch.chdir(REPO)
    log = tmp_path / "build.log"
    log.write_text(p.stderr)
    rel = os.path.relpath(LEGACY, REPO)
    runtime = {"format": "anydev-report", "version": 1, "processes": [{"pid": 1}],
               "calls": [{"file": rel, "line": 43, "module": "", "rule": "AD625",
                          "legacy": "c10::cuda::getCurrentCUDAStream",
                          "replacement": "at::accelerator::getCurrentStream", "count": 7,
                          "first_seen": "2026-12-01T00:00:00.000Z"}]}
    run_json = tmp_path / "run.json"
    run_json.write_text(json.dumps(runtime))
    rc, out, err = run_cli("report", "show", str(log), str(run_json), "--scan", rel,
                           "--format", "json")
    assert rc == 0, err
    data = json.loads(out)
    sites = {(c["line"], c["rule"]): c for c in data["calls"]}
    assert len(sites) == len(set(expected_sites()))
    assert sites[(43, "AD625")]["seen_by"] == {"build": 1, "scan": 1, "run": 7}
    assert sites[(43, "AD625")]["count"] == 9
    assert sites[(16, "AD601")]["seen_by"] == {"build": 1, "scan": 1}
    rc, out, err = run_cli("report", "show", str(log), "--format", "sarif")
    assert rc == 0, err
    sarif = json.loads(out)
    results = sarif["runs"][0]["results"]
    assert len(results) == len(set(expected_sites()))
    assert {r["ruleId"] for r in results} == {rule for _, rule in expected_sites()}
    assert "compiler warnings 1" in results[0]["message"]["text"]
    first = results[0]["locations"][0]["physicalLocation"]
    assert first["artifactLocation"]["uri"] == "tests/fixtures/cpp_ext/legacy_calls.cpp"
    assert first["region"] == {"startLine": 16, "startColumn": 11}  # the scanner's column
    rc, out, err = run_cli("report", "show", str(log))
    assert rc == 0 and "legacy_calls.cpp:16  c10::cuda::device_count" in out
    out_json = tmp_path / "all.json"
    rc, _, err = run_cli("report", "merge", str(log), str(run_json), "-o", str(out_json))
    assert rc == 0, err
    assert report.load(str(out_json))["calls"]


# --- the log reader on its own ----------------------------------------------------


def test_parse_reads_the_forms_of_each_compiler():
    log = "\n".join([
        "ext.cpp: In function 'void f()':",
        "ext.cpp:12:40: warning: 'c10::cuda::CUDAStream c10::cuda::getCurrentCUDAStream("
        "c10::DeviceIndex)' is deprecated: use at::accelerator::getCurrentStream [AD625] "
        "[-Wdeprecated-declarations]",
        "   12 |   auto s = c10::cuda::getCurrentCUDAStream();  // [AD601] in a comment",
        "./torch_deprecations.h:9:1: note: declared here [AD625]",
        "\x1b[01m\x1b[Kk.cu:7:3:\x1b[m\x1b[K \x1b[01;35m\x1b[Kwarning: \x1b[m\x1b[K'device_count'"
        " is deprecated: use at::accelerator::deviceCount [AD601] [-Wdeprecated-declarations]",
        "k.cu(30): warning #1444-D: function \"c10::cuda::device_synchronize\" (declared at line"
        " 5 of \"h\") was declared deprecated (\"use at::accelerator::synchronizeDevice [AD605]\")",
        "src/a.cc:3:9: error: 'current_device' is deprecated: use at::accelerator::getDeviceIndex"
        " [AD603] [-Werror,-Wdeprecated-declarations]",
        "b.cpp:1:1: warning: 'x' is deprecated: use y [AD999] [-Wdeprecated-declarations]",
        "/site-packages/torch/include/c10/cuda/impl/CUDAGuardImpl.h:120:36: warning: "
        "'GetDevice' is deprecated: use at::accelerator::getDeviceIndex [AD609]",
        "c.cpp:4:2: warning: unused variable 'AD625' [-Wunused-variable]",
    ])
    got = [(d.file, d.line, d.column, d.rule, d.style) for d in _build_log.parse(log, "/b")]
    assert got == [("/b/ext.cpp", 12, 40, "AD625", "gnu"),
                   ("/b/k.cu", 7, 3, "AD601", "gnu"),
                   ("/b/k.cu", 30, None, "AD605", "nvcc"),
                   ("/b/src/a.cc", 3, 9, "AD603", "gnu")]


def test_an_unreadable_or_binary_log_is_a_clear_error(tmp_path: Path):
    missing = tmp_path / "missing.log"
    rc, _, err = run_cli("report", "show", str(missing))
    assert rc == 2 and "missing.log" in err and "Traceback" not in err
    binary = tmp_path / "b.log"
    binary.write_bytes(b"\x7fELF\0\0\0")
    rc, _, err = run_cli("report", "show", str(binary))
    assert rc == 2 and "not a text file" in err
    rc, _, err = run_cli("report", "show", str(tmp_path / "b.log"), "--scan",
                         str(tmp_path / "nowhere"))
    assert rc == 2


def test_a_log_without_tagged_warnings_is_an_empty_report(tmp_path: Path):
    log = tmp_path / "b.log"
    log.write_bytes(b"[1/2] g++ -c a.cpp\n\xff\xfe odd bytes\nlinking\n")
    rc, out, err = run_cli("report", "show", str(log))
    assert rc == 0, err
    assert "no legacy calls" in out


# --- anydev.cpp_extension -----------------------------------------------------------


def test_extra_compile_args_merges_into_the_build_s_own():
    args = cpp_extension.extra_compile_args({"cxx": ["-O3"], "nvcc": ["-O3", "--use_fast_math"],
                                             "nvcc_dlink": ["-dlto"]}, torch_includes=["/t/inc"])
    header = cpp_extension.header()
    assert args["cxx"] == ["-O3", "-include", header, "-isystem", "/t/inc",
                           "-Wdeprecated-declarations"]
    assert args["nvcc"] == ["-O3", "--use_fast_math", "-include", header, "-isystem", "/t/inc",
                            "-Xcompiler", "-Wdeprecated-declarations"]
    assert args["nvcc_dlink"] == ["-dlto"]
    assert cpp_extension.extra_compile_args(["-g"], torch_includes=[])["cxx"][:3] == \
        ["-g", "-include", header]
    with pytest.raises(ValueError, match="unknown key"):
        cpp_extension.extra_compile_args({"cc": []})
    with pytest.raises(TypeError):
        cpp_extension.extra_compile_args("-O3")  # type: ignore[arg-type]
    # anydev.torch re-exports it (in a fresh interpreter: importing anydev.torch
    # installs the forwarders on torch).
    rc, out, err = run_python("import anydev.torch, anydev.cpp_extension as c; "
                              "print(anydev.torch.extra_compile_args is c.extra_compile_args)")
    assert rc == 0 and out.strip() == "True", err


def test_the_installed_header_is_the_generated_one():
    installed = Path(cpp_extension.header()).read_text()
    assert installed == (REPO / "shims/include/anydev/torch_deprecations.h").read_text()
    assert installed == generate.gen_torch_deprecations(_table())


# --- the table's new keys are validated strictly --------------------------------------

AD625_REDECLARE = ('redeclare = [{ torch = "2.13", header = "c10/cuda/CUDAStream.h", '
                   'decl = "CUDAStream getCurrentCUDAStream(DeviceIndex device_index)" }]')
BAD_REDECLARE = {
    # name: (replacement of AD625's redeclare line, the reason expected)
    "bad range": (AD625_REDECLARE.replace('"2.13"', '"2.13..2.6"'), r"ends before it starts"),
    "past newest": (AD625_REDECLARE.replace('"2.13"', '"2.13..2.99"'),
                    r"goes past the newest release the table knows"),
    "not a release": (AD625_REDECLARE.replace('"2.13"', '"latest"'), r"is not a release like"),
    "unknown header": (AD625_REDECLARE.replace("c10/cuda/CUDAStream.h", "c10/cuda/Nope.h"),
                       r"header 'c10/cuda/Nope.h' is not one generate.py knows"),
    "wrong namespace": (AD625_REDECLARE.replace("c10/cuda/CUDAStream.h", "c10/xpu/XPUStream.h"),
                        r"does not declare namespace c10::cuda"),
    "default argument": (AD625_REDECLARE.replace("device_index)", "device_index = -1)"),
                         r"no default arguments"),
    "other function": (AD625_REDECLARE.replace("getCurrentCUDAStream(", "getStream("),
                       r"is not `RETURN getCurrentCUDAStream\(PARAMETERS\)"),
    "unknown item key": (AD625_REDECLARE.replace("torch =", "since = \"2.6\", torch ="),
                         r"unknown key `since`"),
    "inline not bool": (AD625_REDECLARE.replace("torch =", "inline = 1, torch ="),
                        r"`inline` must be true or false"),
    "twice": (AD625_REDECLARE.replace("}]", '}, { torch = "2.13", header = "c10/cuda/CUDAStream.h", '
                                            'decl = "CUDAStream  getCurrentCUDAStream(DeviceIndex '
                                            'device_index)" }]'),
              r"is given twice for overlapping torch ranges"),
    "missing": ("", r"a deprecated C\+\+ call needs `redeclare`"),
    "both": (AD625_REDECLARE + '\nnot_redeclared = "because"', r"not both"),
}


@pytest.mark.parametrize("name", list(BAD_REDECLARE))
def test_a_bad_redeclaration_stops_the_generator(tmp_path: Path, name: str):
    shutil.copytree(REPO / "compat_map", tmp_path / "compat_map")
    cpp = tmp_path / "compat_map" / "cpp.toml"
    text = cpp.read_text()
    assert AD625_REDECLARE in text
    new, reason = BAD_REDECLARE[name]
    cpp.write_text(text.replace(AD625_REDECLARE, new, 1))
    p = subprocess.run([sys.executable, str(REPO / "compat_map" / "generate.py"), "--root",
                        str(tmp_path), "--check"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 1, p.stdout + p.stderr
    assert re.search(rf"^compat_map/cpp\.toml:\d+: c10::cuda::getCurrentCUDAStream: .*{reason}",
                     p.stderr, re.M), p.stderr


def test_redeclare_on_a_class_row_is_an_error(tmp_path: Path):
    shutil.copytree(REPO / "compat_map", tmp_path / "compat_map")
    cpp = tmp_path / "compat_map" / "cpp.toml"
    text = cpp.read_text()
    anchor = 'shim = { name = "CUDAGuard", alias = "::anydev::compat::DeviceGuard" }'
    assert anchor in text
    cpp.write_text(text.replace(anchor, anchor + "\n" + AD625_REDECLARE, 1))
    p = subprocess.run([sys.executable, str(REPO / "compat_map" / "generate.py"), "--root",
                        str(tmp_path), "--check"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 1
    assert "c10::cuda::CUDAGuard: `redeclare` is for deprecated C++ rows of kind \"call\"" \
        in p.stderr, p.stderr
