"""PyTorch versions for the fixer: the *target* (the oldest PyTorch the fixed
code must keep running on) and what each compat-table row needs.

    target = resolve_target("2.1")                  # from --target-torch / config
    target = project_target("src/pkg/mod.py")      # from the project's own files
    why = needs(row, target)                        # None, or "needs torch >= 2.9 (target 2.1)"

A project declares its torch in ``pyproject.toml`` (``[project] dependencies``
and ``[project.optional-dependencies]``), ``setup.cfg`` (``[options]
install_requires``), ``setup.py`` (``install_requires=[...]`` read from the
syntax tree, never run) or ``requirements*.txt``. The target is the lower
bound of its ``torch`` requirement: ``torch>=2.1`` and ``torch~=2.1.0`` give
2.1, ``torch==2.4.*`` 2.4, ``torch>2.0`` 2.0 (a later 2.0.x already
satisfies it), ``torch<3`` or a bare ``torch`` none. Without a declaration
the target is the newest release the table knows (``NEWEST_TORCH``), and the
fix summary says which torch the fixed code now needs.
"""

from __future__ import annotations

import ast
import configparser
import os
import re
from dataclasses import dataclass
from typing import Optional

from anydev._compat.table import NEWEST_TORCH

__all__ = ["Target", "VersionError", "needs", "parse_version", "project_target", "resolve_target"]

Version = tuple[int, int]


class VersionError(ValueError):
    """A target-torch value that is not a version."""


def parse_version(text: str) -> Version:
    """"2.1" / "2.1.0" / "2.1.0+cpu" -> (2, 1); VersionError otherwise."""
    m = re.fullmatch(r"\s*v?(\d+)\.(\d+)(?:\.\d+)?(?:[.+-]?[A-Za-z0-9.+-]*)?\s*", str(text))
    if not m:
        raise VersionError(f"{text!r} is not a PyTorch version like \"2.1\"")
    return int(m.group(1)), int(m.group(2))


def fmt(v: Version) -> str:
    return f"{v[0]}.{v[1]}"


NEWEST: Version = parse_version(NEWEST_TORCH)


@dataclass(frozen=True)
class Target:
    """The oldest PyTorch the fixed code must run on, and where that came from."""

    version: Version
    source: str  # "--target-torch", "pyproject.toml [tool.anydev]", "setup.cfg", ..., "default"

    @property
    def text(self) -> str:
        return fmt(self.version)

    @property
    def declared(self) -> bool:
        return self.source != "default"


def resolve_target(value: Optional[str], source: str = "--target-torch") -> Optional[Target]:
    """A target given by the user (VersionError for a malformed one); None for None."""
    if value is None:
        return None
    v = parse_version(value)
    if v < (1, 0):
        raise VersionError(f"{value!r}: anydev knows PyTorch from 1.0 on")
    return Target(v, source)


def since_of(row) -> Optional[Version]:
    """The first release with the row's replacement; None for "main" (no release)."""
    if not getattr(row, "since", None) or row.since == "main":
        return None
    return parse_version(row.since)


def needs(row, target: Target) -> Optional[str]:
    """None when the row's rewrite runs on the target, else the finding's reason."""
    since = getattr(row, "since", None)
    if not since:
        return None
    if since == "main":
        return (f"no released PyTorch has {row.replacement} (up to {NEWEST_TORCH}); "
                "not a fix target")
    v = parse_version(since)
    if v > target.version:
        return f"needs torch >= {fmt(v)} (target {target.text})"
    return None


# --- the project's own declaration ------------------------------------------------------

_REQ = re.compile(r"^\s*torch\s*(?:\[[^\]]*\])?\s*(?P<spec>(?:[<>=!~]=?|===)[^;#]*)?(?:;.*)?$",
                  re.IGNORECASE)


def lower_bound(requirement: str) -> Optional[Version]:
    """The lower bound of one ``torch`` requirement string, or None (not torch,
    or no lower bound)."""
    req = requirement.strip()
    m = _REQ.match(req)
    if not m:
        return None
    spec = m.group("spec")
    if not spec:
        return None
    best: Optional[Version] = None
    for part in spec.split(","):
        part = part.strip()
        pm = re.match(r"(===|==|>=|~=|>|<=|<|!=)\s*([0-9][0-9A-Za-z.*+-]*)", part)
        if not pm:
            continue
        op, ver = pm.groups()
        if op in ("<", "<=", "!="):
            continue
        try:
            v = parse_version(ver.replace(".*", ".0") if ver.count(".") else ver + ".0")
        except VersionError:
            continue
        if best is None or v > best:
            best = v
    return best


def _load_toml(data: bytes) -> Optional[dict]:
    from anydev._common.config import loads_toml  # anydev's reader, then tomllib where it refuses

    try:
        return loads_toml(data.decode("utf-8"))
    except (ValueError, RecursionError):  # not UTF-8, not TOML, no tomllib
        return None


def _from_pyproject(path: str) -> tuple[Optional[Version], Optional[str], bool]:
    """(declared torch lower bound, [tool.anydev] target-torch, is a project file)."""
    try:
        with open(path, "rb") as f:
            doc = _load_toml(f.read())
    except OSError:
        return None, None, False
    if not isinstance(doc, dict):
        return None, None, False
    tool = doc.get("tool", {}).get("anydev", {}) if isinstance(doc.get("tool"), dict) else {}
    explicit = tool.get("target-torch") if isinstance(tool, dict) else None
    project = doc.get("project")
    reqs: list[str] = []
    if isinstance(project, dict):
        deps = project.get("dependencies")
        if isinstance(deps, list):
            reqs += [d for d in deps if isinstance(d, str)]
        opt = project.get("optional-dependencies")
        if isinstance(opt, dict):
            for group in opt.values():
                if isinstance(group, list):
                    reqs += [d for d in group if isinstance(d, str)]
    bound = _best(reqs)
    is_project = isinstance(project, dict) or explicit is not None
    return bound, (str(explicit) if explicit is not None else None), is_project


def _best(reqs: list[str]) -> Optional[Version]:
    """The lowest lower bound among the torch requirements (the project must
    run on every torch any of its requirement groups allows)."""
    bounds = [b for b in (lower_bound(r) for r in reqs) if b is not None]
    return min(bounds) if bounds else None


def _from_setup_cfg(path: str) -> Optional[Version]:
    cp = configparser.ConfigParser(interpolation=None)
    try:
        cp.read(path, encoding="utf-8")
    except (configparser.Error, OSError, UnicodeDecodeError):
        return None
    reqs: list[str] = []
    if cp.has_option("options", "install_requires"):
        reqs += cp.get("options", "install_requires").splitlines()
    if cp.has_section("options.extras_require"):
        for _, v in cp.items("options.extras_require"):
            reqs += v.splitlines()
    return _best(reqs)


def _from_setup_py(path: str) -> Optional[Version]:
    try:
        with open(path, "rb") as f:
            tree = ast.parse(f.read(), filename=path)
    except (OSError, SyntaxError, ValueError):
        return None
    reqs: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg in ("install_requires", "extras_require"):
            for n in ast.walk(node.value):
                if isinstance(n, ast.Constant) and isinstance(n.value, str):
                    reqs.append(n.value)
    return _best(reqs)


def _from_requirements(path: str) -> Optional[Version]:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    return _best([line.split("#", 1)[0] for line in lines])


class ProjectTargets:
    """The target of each folder's project, found once per folder: the nearest
    folder at or above a file that has a project file (``pyproject.toml`` with
    ``[project]`` or ``[tool.anydev]``, ``setup.cfg``, ``setup.py`` or
    ``requirements*.txt``) decides."""

    def __init__(self) -> None:
        self._memo: dict[str, Optional[Target]] = {}

    def for_file(self, path: str) -> Optional[Target]:
        d = os.path.dirname(os.path.abspath(path))
        seen: list[str] = []
        found: Optional[Target] = None
        while True:
            if d in self._memo:
                found = self._memo[d]
                break
            seen.append(d)
            t = self._declared_in(d)
            if t is not None:
                found = t
                break
            parent = os.path.dirname(d)
            if parent == d:
                break
            d = parent
        for s in seen:
            self._memo[s] = found
        return found

    @staticmethod
    def _declared_in(d: str) -> Optional[Target]:
        """The folder's target when it holds a project file that says one."""
        py = os.path.join(d, "pyproject.toml")
        bound = None
        names: list[str] = []
        if os.path.isfile(py):
            bound, explicit, _ = _from_pyproject(py)
            if explicit is not None:
                try:
                    return resolve_target(explicit, f"{py} [tool.anydev] target-torch")
                except VersionError:
                    return None  # reported by the configuration reader
            if bound is not None:
                return Target(bound, f"{py} [project] dependencies")
        for name, reader in (("setup.cfg", _from_setup_cfg), ("setup.py", _from_setup_py)):
            p = os.path.join(d, name)
            if os.path.isfile(p):
                b = reader(p)
                if b is not None:
                    return Target(b, p)
        try:
            names = sorted(n for n in os.listdir(d)
                           if n.startswith("requirements") and n.endswith(".txt"))
        except OSError:
            names = []
        bounds = []
        for n in names:
            b = _from_requirements(os.path.join(d, n))
            if b is not None:
                bounds.append((b, n))
        if bounds:
            b, n = min(bounds)
            return Target(b, os.path.join(d, n))
        return None


def project_target(path: str) -> Optional[Target]:
    """The target the project around ``path`` declares, or None."""
    return ProjectTargets().for_file(path)


DEFAULT = Target(NEWEST, "default")
