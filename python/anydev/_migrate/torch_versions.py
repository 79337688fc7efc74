"""PyTorch versions for the fixer: the *target* (the oldest PyTorch the fixed
code must keep running on) and what each compat-table row needs.

    target = resolve_target("2.1")                  # from --target-torch / config
    target = project_target("src/pkg/mod.py")      # from the project's own files
    why = needs(row, target)                        # None, or "needs torch >= 2.9 (target 2.1)"

A project declares its torch in ``pyproject.toml`` (``[project] dependencies``
and ``[project.optional-dependencies]``), ``setup.cfg`` (``[options]
install_requires``), ``setup.py`` (``install_requires=[...]``, else a version
check it makes such as ``assert torch_ver >= [1, 8]``, read from the syntax
tree, never run), ``requirements*.txt`` (with the files their ``-r``/``-c``
lines name; ``requirements/requirements.txt`` where the folder has none),
``environment.yml``, or a version check in its package's ``__init__.py``.
The target is the lower bound of its ``torch`` requirement: ``torch>=2.1``
and ``torch~=2.1.0`` give 2.1, ``torch==2.4.*`` 2.4, ``torch>2.0`` 2.0 (a
later 2.0.x already satisfies it). A requirement without a lower bound
(``torch<2.6``, a bare ``torch``) and a project that names no torch at all get
the oldest release the table knows (``OLDEST``, Note [The oldest release]):
only the rewrites every release has are applied, and the summary says how
many more ``--target-torch X`` would make fixable.
"""

from __future__ import annotations

import os

from anydev._migrate.record import record
from anydev._migrate.scan_table import NEWEST_TORCH

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover - Note [A light target reader]
    import ast
    from typing import Optional

__all__ = ["Target", "VersionError", "needs", "parse_version", "project_target", "resolve_target"]

Version = tuple[int, int]


class VersionError(ValueError):
    """A target-torch value that is not a version."""


#: What may follow a version's numbers ("2.1.0+cpu", "2.1.0a0", "2.1.0.dev20240101").
_SUFFIX = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.+-")


def parse_version(text: str) -> Version:
    """"2.1" / "2.1.0" / "2.1.0+cpu" -> (2, 1); VersionError otherwise.
    (Read by hand, not with `re`: Note [A light target reader].)"""
    t = str(text).strip()
    if t[:1] == "v":
        t = t[1:]
    i, n = 0, len(t)
    while i < n and t[i].isdecimal():
        i += 1
    j = i + 1
    while j < n and t[j].isdecimal():
        j += 1
    k = j  # a patch number (any decimal digits, as the minor's), then ASCII
    if k + 1 < n and t[k] == "." and t[k + 1].isdecimal():
        k += 2
        while k < n and t[k].isdecimal():
            k += 1
    if i == 0 or i >= n or t[i] != "." or j == i + 1 or not all(c in _SUFFIX for c in t[k:]):
        raise VersionError(f"{text!r} is not a PyTorch version like \"2.1\"")
    return int(t[:i]), int(t[i + 1:j])


def fmt(v: Version) -> str:
    return f"{v[0]}.{v[1]}"


NEWEST: Version = parse_version(NEWEST_TORCH)


@record(frozen=True)  # a dataclass, without importing dataclasses
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

_PATTERNS = {
    "req_option": (r"^\s*(?:-r|-c|--requirement|--constraint)(?:\s*=\s*|\s+|(?=\S))(\S+)", ""),
    "conda_torch": (r"^\s*-\s*(?:pytorch|torch)\b\s*(?P<spec>[<>=!~][^#]*)?(?:#.*)?$", ""),
    "needs": (r"needs torch >= (\d+\.\d+) \(target", ""),
}
_compiled: dict = {}


def _rx(name: str):
    """The compiled pattern ``name`` of _PATTERNS, compiled when first asked
    (Note [A light target reader])."""
    got = _compiled.get(name)
    if got is None:
        import re  # noqa: PLC0415

        pattern, flags = _PATTERNS[name]
        got = _compiled[name] = re.compile(pattern, re.IGNORECASE if flags else 0)
    return got


#: A requirement's comparison operators, in the order they are tried.
_OPS = ("===", "==", ">=", "~=", ">", "<=", "<", "!=")
_VERSION_CHARS = frozenset("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.*+-")


def _torch_spec(requirement: str) -> Optional[str]:
    """The version specifier of a ``torch`` requirement ("" for none: `torch`,
    `torch[extra]`, `torch; marker`); None for a requirement of another
    package or one that does not read. PEP 508's form, read by hand (Note [A
    light target reader]): `torch`, extras in brackets, then nothing, a
    marker after `;`, or operators and versions up to the marker."""
    r = requirement.strip()
    if r[:5].lower() != "torch":
        return None
    rest = r[5:].lstrip()
    if rest.startswith("["):
        k = rest.find("]")
        if k < 0:
            return None
        rest = rest[k + 1:].lstrip()
    spec = rest.split(";", 1)[0]
    if not spec:
        return ""
    if spec[0] not in "<>=!~" or "#" in spec:
        return None
    return spec


def _spec_part(part: str) -> Optional[tuple[str, str]]:
    """(operator, version) of one comma-separated item of a specifier, or None."""
    op = next((o for o in _OPS if part.startswith(o)), None)
    if op is None:
        return None
    ver = part[len(op):].lstrip()
    k = 0
    while k < len(ver) and ver[k] in _VERSION_CHARS:
        k += 1
    ver = ver[:k]
    return (op, ver) if ver[:1].isdigit() else None


def lower_bound(requirement: str) -> Optional[Version]:
    """The lower bound of one ``torch`` requirement string, or None (not torch,
    or no lower bound)."""
    spec = _torch_spec(requirement)
    if not spec:
        return None
    best: Optional[Version] = None
    for part in spec.split(","):
        part = part.strip()
        pm = _spec_part(part)
        if pm is None:
            continue
        op, ver = pm
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


def _from_pyproject(path: str) -> tuple["_Found", Optional[str], bool]:
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
    bound = _found(reqs)
    is_project = isinstance(project, dict) or explicit is not None
    return bound, (str(explicit) if explicit is not None else None), is_project


def _from_setup_cfg(path: str) -> _Found:
    data = _read(path)
    if data is None or b"torch" not in data.lower():
        return None  # no torch requirement in it (and configparser not imported)
    import configparser  # noqa: PLC0415 (where a setup.cfg is: not at every start-up)

    cp = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        # (as open() in text mode reads it: universal newlines)
        cp.read_string(data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n"), path)
    except (configparser.Error, UnicodeDecodeError):
        return None
    reqs: list[str] = []
    if cp.has_option("options", "install_requires"):
        reqs += cp.get("options", "install_requires").splitlines()
    if cp.has_section("options.extras_require"):
        for _, v in cp.items("options.extras_require"):
            reqs += v.splitlines()
    return _found(reqs)


def _found(reqs: list[str]) -> _Found:
    """(the lowest lower bound, the requirement that gave it) of the torch
    requirements among ``reqs``; ``(None, req)`` when torch is required
    without a lower bound (a bare ``torch``, or ``torch<2.6``: every release
    up to the bound); None when torch is not among them."""
    named = [r.strip() for r in reqs if _torch_spec(r) is not None]
    if not named:
        return None
    bounds = [(b, r) for r in named for b in (lower_bound(r),) if b is not None]
    if bounds:
        return min(bounds)
    return None, named[0]


def _from_setup_py(path: str) -> _Found:
    """install_requires/extras_require strings, else a version check the
    script makes (``assert torch_ver >= [1, 8]``, ``if version.parse(
    torch.__version__) < version.parse("1.8"): raise ...``), from its syntax
    tree (never run)."""
    import ast  # noqa: PLC0415 (Note [A light target reader])
    tree = _parse_file(path)
    if tree is None:
        return None
    reqs: list[str] = []
    nodes = _walk(tree)
    for node in nodes:
        if isinstance(node, ast.keyword) and node.arg in ("install_requires", "extras_require"):
            for n in _walk(node.value):
                if isinstance(n, ast.Constant) and isinstance(n.value, str):
                    reqs.append(n.value)
    got = _found(reqs)
    if got is not None and got[0] is not None:
        return got
    check = _version_check(tree, nodes)
    return check if check is not None else got


def _walk(node: ast.AST) -> list[ast.AST]:
    """ast.walk's nodes in its order (breadth first, fields in order), as a
    list: without a generator per node (ast.walk's iter_child_nodes), a
    large setup.py's checks cost a third of what they did, which `anydev fix`
    of one file of the project pays."""
    import ast  # noqa: PLC0415 (Note [A light target reader])
    AST = ast.AST
    todo = [node]
    i = 0
    while i < len(todo):
        n = todo[i]
        i += 1
        for name in n._fields:
            v = getattr(n, name, None)
            if isinstance(v, AST):
                todo.append(v)
            elif type(v) is list:
                for x in v:
                    if isinstance(x, AST):
                        todo.append(x)
    return todo


def _read(path: str) -> Optional[bytes]:
    """A project file's bytes; None where it cannot be read."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def _parse_file(path: str, data: Optional[bytes] = None) -> Optional[ast.Module]:
    """The syntax tree of a module (``data``: its bytes, where the caller
    read them); None where it cannot be read or parsed, or is over 2 MiB."""
    import ast  # noqa: PLC0415 (Note [A light target reader])
    data = _read(path) if data is None else data
    if data is None or len(data) > (2 << 20):
        return None
    try:
        return ast.parse(data, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _version_literal(node: ast.AST) -> Optional[Version]:
    """(1, 8) from `[1, 8]`, `(1, 8, 0)`, `"1.8"`, `version.parse("1.8")`,
    `digit_version("1.8.0")`, `Version("1.8")`; None otherwise."""
    import ast  # noqa: PLC0415 (Note [A light target reader])
    if isinstance(node, (ast.List, ast.Tuple)) and len(node.elts) >= 2 and all(
            isinstance(e, ast.Constant) and type(e.value) is int for e in node.elts[:2]):
        return node.elts[0].value, node.elts[1].value  # type: ignore[union-attr]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            return parse_version(node.value)
        except VersionError:
            return None
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        return _version_literal(node.args[0])
    return None


def _names_torch_version(node: ast.AST, aliases: set[str]) -> bool:
    import ast  # noqa: PLC0415 (Note [A light target reader])
    for n in _walk(node):
        if isinstance(n, ast.Attribute) and n.attr == "__version__" and \
                isinstance(n.value, ast.Name) and n.value.id in ("torch", "th"):
            return True
        if isinstance(n, ast.Name) and (n.id in aliases or (
                "torch" in n.id.lower() and "ver" in n.id.lower())):
            return True
    return False


def _version_check(tree: ast.Module, nodes: Optional[list] = None) -> _Found:
    """The minimum torch a module's own check demands: ``assert V >= X`` or
    ``if V < X: raise ...`` at module level (or in a function it runs), where
    V is torch's version (``torch.__version__``, a name made from it) and X a
    version literal. ``nodes``: _walk(tree), where the caller has it (one
    walk of a large setup.py serves every question)."""
    import ast  # noqa: PLC0415 (Note [A light target reader])
    nodes = _walk(tree) if nodes is None else nodes
    aliases: set[str] = set()
    for n in nodes:
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and \
                isinstance(n.targets[0], ast.Name) and _names_torch_version(n.value, aliases):
            aliases.add(n.targets[0].id)
    best: Optional[tuple[Version, str]] = None

    def bound(test: ast.AST, negate: bool) -> Optional[Version]:
        if not isinstance(test, ast.Compare) or len(test.ops) != 1:
            return None
        op, left, right = test.ops[0], test.left, test.comparators[0]
        if _names_torch_version(left, aliases):
            v, mine = _version_literal(right), op
        elif _names_torch_version(right, aliases):
            v = _version_literal(left)
            mine = {ast.Lt: ast.Gt(), ast.Gt: ast.Lt(), ast.LtE: ast.GtE(),
                    ast.GtE: ast.LtE()}.get(type(op), op)
        else:
            return None
        if v is None:
            return None
        demands_at_least = isinstance(mine, (ast.GtE, ast.Gt)) if not negate else \
            isinstance(mine, (ast.Lt, ast.LtE))
        return v if demands_at_least else None

    for n in nodes:
        got = None
        if isinstance(n, ast.Assert):
            got = bound(n.test, False)
        elif isinstance(n, ast.If) and n.body and isinstance(n.body[-1], ast.Raise) and \
                not n.orelse:
            got = bound(n.test, True)
        if got is not None and (best is None or got > best[0]):
            best = (got, ast.unparse(n.test if isinstance(n, (ast.Assert, ast.If)) else n)[:60])
    return best


def _from_requirements(path: str, seen: Optional[set[str]] = None) -> _Found:
    """A requirements file's torch, following its ``-r FILE`` and ``-c FILE``
    lines (relative to the file), each file once."""
    seen = set() if seen is None else seen
    real = os.path.realpath(path)
    if real in seen or len(seen) > 64:
        return None
    seen.add(real)
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    reqs: list[str] = []
    results: list[_Found] = []
    for line in lines:
        line = line.split(" #", 1)[0].split("\t#", 1)[0]
        if line.lstrip().startswith("#"):
            continue
        m = _rx("req_option").match(line)
        if m:
            nested = os.path.join(os.path.dirname(path), m.group(1))
            got = _from_requirements(nested, seen)
            if got is not None:
                got = (got[0], f"{got[1]}, in {m.group(1)}")
            results.append(got)
            continue
        reqs.append(line)
    results.append(_found(reqs))
    return _merge(results)


def _merge(results: list[_Found]) -> _Found:
    """The lowest lower bound of several sources; a bound beats none."""
    got = [r for r in results if r is not None]
    bounded = [r for r in got if r[0] is not None]
    if bounded:
        return min(bounded)  # type: ignore[type-var]
    return got[0] if got else None


def _from_environment_yml(path: str) -> _Found:
    """A conda environment file's ``pytorch``/``torch`` (conda's ``=2.1`` is
    ``==2.1.*``), from the dependency lines, the pip ones included."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    reqs = []
    for line in lines:
        m = _rx("conda_torch").match(line)
        if m:
            spec = (m.group("spec") or "").strip()
            if spec.startswith("=") and not spec.startswith("=="):
                spec = "=" + spec
            reqs.append("torch" + spec)
    return _found(reqs)


def _from_package_init(d: str) -> _Found:
    """A version check in the ``__init__.py`` of a package at ``d`` (or
    under ``d/src``): ``assert digit_version(torch.__version__) >= ...``."""
    for base in (d, os.path.join(d, "src")):
        try:
            names = sorted(os.listdir(base))
        except OSError:
            continue
        for n in names:
            init = os.path.join(base, n, "__init__.py")
            if n.startswith((".", "_")) or n in ("tests", "test", "docs", "examples") or \
                    not os.path.isfile(init):
                continue
            data = _read(init)
            if data is None or not _may_check_torch_version(data):
                continue  # it cannot hold such a check: not parsed
            tree = _parse_file(init, data)
            if tree is not None:
                got = _version_check(tree)
                if got is not None:
                    return got[0], f"{got[1]} ({os.path.relpath(init, d)})"
    return None


def _may_check_torch_version(data: bytes) -> bool:
    """Whether a module's bytes can hold a check _version_check finds: an
    `assert` or a `raise`, and torch's version named as _names_torch_version
    names it (`torch.__version__`, `th.__version__`, an identifier holding
    "torch" and "ver" in any case), which an alias of it needs too. Asked
    before parsing a package's __init__.py (DeepSpeed's is 21 KB and names
    neither: 4 ms of every scan's marks)."""
    if b"assert" not in data and b"raise" not in data:
        return False
    if b"torch.__version__" in data or b"th.__version__" in data:
        return True
    low = data.lower()
    n = len(low)
    i = low.find(b"torch")
    while i >= 0:
        start, end = i, i + 5
        while start > 0 and _ident_byte(low[start - 1]):
            start -= 1
        while end < n and _ident_byte(low[end]):
            end += 1
        if b"ver" in low[start:end]:
            return True
        i = low.find(b"torch", end)
    return False


def _ident_byte(b: int) -> bool:
    """Whether a byte can be part of an identifier: ASCII letters, digits and
    `_`, and any byte of a non-ASCII character (Python takes those in names)."""
    return b >= 0x80 or b == 0x5F or 0x30 <= b <= 0x39 or 0x61 <= (b | 0x20) <= 0x7A


def _has_spec(req: str) -> bool:
    return bool(_torch_spec(req))


#: What a project file says of torch: (lower bound or None, the requirement),
#: or None when it does not name torch.
if TYPE_CHECKING:  # pragma: no cover
    #: A source's declared torch: (its lower bound or None, where), or None.
    _Found = Optional[tuple[Optional[Version], str]]


class ProjectTargets:
    """The target of each folder's project, found once per folder: the nearest
    folder at or above a file that has a project file (``pyproject.toml`` with
    ``[project]`` or ``[tool.anydev]``, ``setup.cfg``, ``setup.py``,
    ``requirements*.txt`` and the files their ``-r``/``-c`` lines name,
    ``requirements/*.txt``, ``environment.yml``) decides; a project that names
    torch without a lower bound (``torch<2.6``, a bare ``torch``) must run on
    every release the table knows (OLDEST); so must one that names none, but
    that one is "not declared"."""

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
        """The folder's target when it holds a project file that names torch."""
        py = os.path.join(d, "pyproject.toml")
        unbounded: Optional[str] = None   # torch named without a lower bound: where
        is_project = False
        if os.path.isfile(py):
            bound, explicit, is_project = _from_pyproject(py)
            if explicit is not None:
                try:
                    return resolve_target(explicit, f"{py} [tool.anydev] target-torch")
                except VersionError:
                    return None  # reported by the configuration reader
            if bound is not None:
                if bound[0] is not None:
                    return Target(bound[0], f"{py} [project] dependencies ({bound[1]})")
                unbounded = f"{py} ({bound[1]})"
        sources: list[tuple[str, _Found]] = []
        for name, reader in (("setup.cfg", _from_setup_cfg), ("setup.py", _from_setup_py)):
            p = os.path.join(d, name)
            if os.path.isfile(p):
                is_project = True
                sources.append((p, reader(p)))
        reqs: list[str] = []
        try:
            reqs = sorted(os.path.join(d, n) for n in os.listdir(d)
                          if n.startswith("requirements") and n.endswith(".txt"))
        except OSError:
            pass
        if not reqs:
            sub = os.path.join(d, "requirements")
            reqs = [os.path.join(sub, n) for n in ("requirements.txt", "runtime.txt", "base.txt",
                                                   "install.txt")
                    if os.path.isfile(os.path.join(sub, n))]
        for p in reqs:
            sources.append((p, _from_requirements(p)))
        for n in ("environment.yml", "environment.yaml"):
            p = os.path.join(d, n)
            if os.path.isfile(p):
                sources.append((p, _from_environment_yml(p)))
        if is_project or sources:
            sources.append((d, _from_package_init(d)))
        bounded = [(f[0], p, f[1]) for p, f in sources if f is not None and f[0] is not None]
        if bounded:
            v, p, req = min(bounded)
            return Target(v, f"{p} ({req})")
        # an upper bound alone declares (every release up to it); a bare `torch`
        # declares no version: a project around it may (megatron/core's
        # requirements.txt under Megatron-LM's pyproject.toml)
        named = [(p, f[1]) for p, f in sources if f is not None and _has_spec(f[1])]
        if unbounded is not None and not _has_spec(unbounded.rsplit("(", 1)[-1].rstrip(")")):
            unbounded = None
        if unbounded is None and named:
            unbounded = f"{named[0][0]} ({named[0][1]})"
        if unbounded is not None:
            return Target(OLDEST, f"{unbounded}: no lower bound, so every release the table "
                                  f"knows, from {fmt(OLDEST)}")
        return None


def project_target(path: str) -> Optional[Target]:
    """The target the project around ``path`` declares, or None."""
    return ProjectTargets().for_file(path)


#: The oldest release the table knows: the oldest build its claims are checked
#: against (Debian's 1.13 in tools/prove_fixes.py; Note [The oldest release]).
OLDEST: Version = (1, 13)

#: The target where a project declares none: every release the table knows.
DEFAULT = Target(OLDEST, "default")


def unlocks(needs_reasons: list[str]) -> list[tuple[str, int]]:
    """(release, how many more findings --target-torch release would make
    fixable) for the releases that ``needs torch >= X`` reasons name, each
    count cumulative (a newer target also unlocks the older ones)."""
    by: dict[Version, int] = {}
    for why in needs_reasons:
        m = _rx("needs").match(why)
        if m:
            v = parse_version(m.group(1))
            by[v] = by.get(v, 0) + 1
    out, total = [], 0
    for v in sorted(by):
        total += by[v]
        out.append((fmt(v), total))
    return out


# Note [A light target reader]
# `anydev scan` marks `[*]` and counts "fixable" at the run's target torch
# (Note [Marks of the fixer] in anydev/_cli/scan.py), so even a one-file scan
# (pre-commit, an editor on save) reads the project's declared torch. This
# module is imported then, and must cost what the scan's start-up allows
# (tests/python/cli/test_cli_fast_argv.py): no `re` (versions are read by
# hand, requirement patterns compiled when a requirement is read), no `ast`
# (imported by the functions that read setup.py and __init__.py), no `typing`,
# and the newest release from the scanner's small table, not the whole one.

# Note [The oldest release]
# A project that declares no torch must keep running on the torch its users
# have, which the fixer cannot know: assuming the newest release broke
# detectron2 (no torch requirement, an `assert torch_ver >= [1, 8]` in its
# setup.py) on 1.13, where torch.accelerator does not exist. So the target of
# an undeclared project is the oldest release the table knows (1.13, the
# oldest build tools/prove_fixes.py checks the claims on): only the rewrites
# every release has are applied, and `anydev fix` says how many more
# `--target-torch X` would make fixable. A project that names torch without a
# lower bound (`torch<2.6`, a bare `torch`) declares that every release will
# do: the same target, but declared.
