"""Builds anydev's PyTorch backend for ``sim`` against the imported torch.

PyTorch's C++ ABI changes between releases, so the backend (the C++ sources
of ``python/torch_sim/``, shipped in the wheel as ``anydev/_torch/torch_sim/``)
is compiled for the torch a process imports, once, into a cache folder keyed
by everything the binary depends on: torch's version and build, the Python,
the machine, anydev's version and the sources themselves. Later processes load
it from there; ``tools/setup.sh`` builds it for the ``.venv``'s torch.

    $XDG_CACHE_HOME/anydev/torch_sim/torch-2.13.0+cpu-cpython-311-x86_64-<hash>/
        libanydev_torch_sim.so
        build.log

A lock file makes concurrent processes build once: the others wait and then
load what the first built. ``ANYDEV_CACHE_DIR`` overrides the cache folder,
``CXX`` the compiler.
"""

from __future__ import annotations

import hashlib
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

# subprocess, tempfile and shutil are imported by the build only: a cached
# build is loaded without them (register_sim's time, issue 28).

LIBRARY_NAME = "libanydev_torch_sim.so"
SOURCES = ("runtime.cc", "kernels.cc", "autocast.cc")
HEADERS = ("sim_backend.h",)

# Bump to rebuild every cached library when the flags below change.
_FLAGS_VERSION = "1"


class BuildError(RuntimeError):
    """The sim backend could not be built (no compiler, no torch headers, a
    compile error); the message says which and what to do."""


def _package_dir() -> Path:
    return Path(__file__).resolve().parent.parent


def source_dir() -> Path:
    """Returns the folder of the backend's C++ sources: the wheel's copy, or
    ``python/torch_sim`` when anydev runs from its source tree."""
    installed = Path(__file__).resolve().parent / "torch_sim"
    if installed.is_dir():
        return installed
    return _package_dir().parent / "torch_sim"


def include_dirs() -> list[Path]:
    """Returns the folder of ``anydev/c_api.h``: the wheel's, or the source
    tree's ``core/include``."""
    installed = _package_dir() / "include"
    if (installed / "anydev" / "c_api.h").is_file():
        return [installed]
    return [_package_dir().parent.parent / "core" / "include"]


def cache_root() -> Path:
    """Returns the cache folder: ``$ANYDEV_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/anydev``, else ``~/.cache/anydev``; ``torch_sim`` in it."""
    explicit = os.environ.get("ANYDEV_CACHE_DIR")
    if explicit:
        return Path(explicit) / "torch_sim"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "anydev" / "torch_sim"


def _torch_dirs(torch: Any) -> tuple[Path, Path]:
    root = Path(torch.__file__).resolve().parent
    return root / "include", root / "lib"


def _anydev_version() -> str:
    # The package version without loading the runtime (anydev.__version__
    # loads anydev._C, which register_sim has loaded anyway).
    import anydev

    return str(anydev.__version__)


def _flags(torch: Any) -> list[str]:
    torch_include, _ = _torch_dirs(torch)
    abi = int(bool(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", True)))
    flags = ["-std=c++20", "-O2", "-fPIC", "-fvisibility=hidden", "-DNDEBUG",
             f"-D_GLIBCXX_USE_CXX11_ABI={abi}", "-I", str(torch_include),
             "-I", str(torch_include / "torch" / "csrc" / "api" / "include")]
    for d in include_dirs():
        flags += ["-I", str(d)]
    return flags


def _key(torch: Any, src: Path) -> str:
    """Returns the cache folder name for this torch, Python, anydev and these
    sources."""
    h = hashlib.sha256()
    parts = [_FLAGS_VERSION, torch.__version__, str(getattr(torch.version, "git_version", "")),
             sys.implementation.cache_tag or "", platform.machine(), _anydev_version()]
    h.update("\0".join(parts).encode())
    for name in SOURCES + HEADERS:
        h.update(name.encode() + b"\0" + (src / name).read_bytes())
    for d in include_dirs():
        h.update((d / "anydev" / "c_api.h").read_bytes())
    tag = sys.implementation.cache_tag or "python"
    return f"torch-{torch.__version__}-{tag}-{platform.machine()}-{h.hexdigest()[:16]}"


def _compiler() -> str:
    import shutil

    cxx = os.environ.get("CXX")
    if cxx:
        if shutil.which(cxx) is None:
            raise BuildError(f"CXX={cxx!r} names no program on PATH")
        return cxx
    for name in ("c++", "g++", "clang++"):
        if shutil.which(name):
            return name
    raise BuildError(
        "building anydev's sim backend for this PyTorch needs a C++ compiler (C++20: g++ 10 "
        "or clang 12 and later), and none was found (c++, g++, clang++ on PATH); install one "
        "or set CXX. It is built once per PyTorch version and cached.")


def library_path(torch: Any) -> tuple[Path, bool]:
    """Returns the built library for ``torch``, building it if needed, and
    whether this call built it."""
    src = source_dir()
    missing = [n for n in SOURCES + HEADERS if not (src / n).is_file()]
    if missing:
        raise BuildError(f"anydev's sim backend sources are missing from {src}: "
                         f"{', '.join(missing)} (a broken anydev installation)")
    folder = cache_root() / _key(torch, src)
    lib = folder / LIBRARY_NAME
    if lib.is_file():
        return lib, False
    folder.mkdir(parents=True, exist_ok=True)
    import fcntl

    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # concurrent processes: one builds
        if lib.is_file():
            return lib, False
        # What a build needs is checked before it is announced: without a
        # compiler or torch's headers the error is all there is to say.
        cxx = _compiler()
        _check_headers(torch)
        start = time.monotonic()
        print(f"anydev: building the sim backend for torch {torch.__version__} into {folder} "
              f"(once per PyTorch version; about a minute)...", file=sys.stderr, flush=True)
        _build(torch, src, folder, lib, cxx)
        print(f"anydev: built the sim backend in {time.monotonic() - start:.0f} s ({lib})",
              file=sys.stderr, flush=True)
    return lib, True


def _check_headers(torch: Any) -> None:
    torch_include, _ = _torch_dirs(torch)
    if not (torch_include / "ATen" / "detail" / "PrivateUse1HooksInterface.h").is_file():
        raise BuildError(
            f"this PyTorch ({torch.__version__}) has no C++ headers at {torch_include}, which "
            "anydev's sim backend is compiled against; install a PyTorch wheel that ships "
            "them (the pytorch.org and PyPI wheels do)")


def _build(torch: Any, src: Path, folder: Path, lib: Path, cxx: str) -> None:
    """Compiles the sources in ``src`` for ``torch`` into ``lib`` (atomically)
    with ``cxx``, leaving the compiler's output in ``folder/build.log``."""
    torch_include, torch_lib = _torch_dirs(torch)
    import subprocess
    import tempfile

    flags = _flags(torch)
    log_path = folder / "build.log"
    with tempfile.TemporaryDirectory(dir=folder, prefix="build-") as tmp:
        objects = [Path(tmp) / (Path(name).stem + ".o") for name in SOURCES]
        commands = [[cxx, *flags, "-c", str(src / name), "-o", str(obj)]
                    for name, obj in zip(SOURCES, objects)]
        jobs = max(1, min(len(commands), os.cpu_count() or 1))
        logs: list[str] = []
        failed: list[str] = []
        pending = list(commands)
        running: list[tuple[list[str], subprocess.Popen]] = []
        while pending or running:
            while pending and len(running) < jobs:
                cmd = pending.pop(0)
                running.append((cmd, subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                                      stderr=subprocess.STDOUT, text=True)))
            cmd, proc = running.pop(0)
            out, _ = proc.communicate()
            logs.append("$ " + " ".join(cmd) + "\n" + out)
            if proc.returncode != 0:
                failed.append(out)
        link = [cxx, "-shared", "-o", str(Path(tmp) / LIBRARY_NAME), *map(str, objects),
                "-L", str(torch_lib), "-lc10", "-ltorch_cpu", "-Wl,--no-undefined"]
        if not failed:
            proc = subprocess.run(link, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True)
            logs.append("$ " + " ".join(link) + "\n" + proc.stdout)
            if proc.returncode != 0:
                failed.append(proc.stdout)
        log_path.write_text("\n".join(logs))
        if failed:
            tail = "\n".join(failed[0].splitlines()[-25:])
            raise BuildError(
                f"building anydev's sim backend for torch {torch.__version__} failed "
                f"(the full log is {log_path}):\n{tail}")
        os.replace(Path(tmp) / LIBRARY_NAME, lib)  # atomic: a reader sees all or nothing


def main(argv: list[str] | None = None) -> int:
    """``python -m anydev._torch.sim_build``: builds (or finds) the backend for
    the torch this Python imports and prints its path (tools/setup.sh)."""
    try:
        import torch
    except ImportError as e:
        print(f"anydev: cannot build the sim backend: PyTorch cannot be imported: {e}",
              file=sys.stderr)
        return 1
    try:
        lib, _ = library_path(torch)
    except BuildError as e:
        print(f"anydev: {e}", file=sys.stderr)
        return 1
    print(lib)
    return 0


if __name__ == "__main__":
    sys.exit(main())
