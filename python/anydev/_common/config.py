"""anydev's one configuration reader: ``[tool.anydev]`` of ``pyproject.toml``
(or the top level of an ``anydev.toml``), for every tool that reads it.

``anydev scan`` and ``anydev fix`` (through :mod:`anydev._cli.scan`), the
runtime policy of legacy calls (:mod:`anydev.compat`) and the scope of
``anydev run --torch`` (:mod:`anydev._torch.adapter`) all read the file here,
against the one schema :data:`KEYS` (documented in docs/configuration.md,
which ``tests/python/common/test_config.py`` checks against it).

* Which file: the nearest folder at or above the start (each file's folder
  for the CLI, the calling file's folder for the runtime policy) that holds
  an ``anydev.toml`` or a ``pyproject.toml`` with a ``[tool.anydev]`` table
  (``anydev.toml`` first when a folder has both); ``--config FILE`` names one.
  :class:`Finder` answers it for the many folders of a tree.
* ``extend = "../pyproject.toml"`` inherits another file's keys (Note
  [Extending a configuration]); a key inherited keeps its file's folder
  (:meth:`Config.base`).
* Relative paths and globs in the file are relative to its folder.
* Globs are gitignore-style everywhere (:class:`Glob`): ``*`` and ``?`` stay
  within one path component, ``**`` spans any number, a pattern without a
  ``/`` matches a name at any depth, one with a ``/`` is anchored to the
  file's folder, a trailing ``/`` matches folders only, and a pattern that
  matches a folder matches everything below it. Module-name globs
  (``legacy-override.module``, ``packages``) are the same with ``.`` for
  ``/``, always anchored, so ``myproj`` covers ``myproj.sub.x``.
* An unknown key is a warning (with a did-you-mean), never a refusal of the
  run; a bad value is a :class:`ConfigError` naming the file and the key.
  Each reader raises only for the keys it uses (:meth:`Config.check`), so a
  typo in a scanner key does not break a program's legacy calls.

This module imports nothing heavy: the command line reads it at start-up.
"""

from __future__ import annotations

import os
TYPE_CHECKING = False
if TYPE_CHECKING:  # `typing` costs the command's start-up
    from typing import Any, Iterable, Optional, Sequence

__all__ = ["Config", "ConfigError", "ConfigWarning", "Finder", "Glob", "KEYS", "POLICIES", "find",
           "load", "load_file",
           "module_glob", "runtime_path_glob"]

POLICIES = ("ignore", "warn", "error")
#: ``concise`` is ``text`` by ruff's name; ``full`` adds each finding's source lines.
OUTPUT_FORMATS = ("text", "concise", "full", "json", "json-lines", "sarif", "github", "gitlab",
                  "junit")


class ConfigError(ValueError):
    """A configuration file or value is invalid; the message names the file
    and the key."""


class ConfigWarning(UserWarning):
    """An unknown key in a configuration file (the run goes on without it)."""


class Key:
    """One key of ``[tool.anydev]``: its TOML type, default and meaning, and
    which tools read it (for the docs and the unknown-key warning)."""

    __slots__ = ("name", "type", "default", "readers", "meaning")

    def __init__(self, name: str, type: str, default: str, readers: str, meaning: str) -> None:
        self.name, self.type, self.default = name, type, default
        self.readers, self.meaning = readers, meaning

    def __repr__(self) -> str:
        return f"Key({self.name!r})"


KEYS: tuple[Key, ...] = (
    Key("extend", "string (a path)", "none", "every reader",
        "Another configuration file (a `pyproject.toml`'s `[tool.anydev]` or an `anydev.toml`, "
        "relative to this file's folder) whose keys this one inherits; a key given here "
        "replaces the inherited one (`extend-select`/`extend-ignore` add up)."),
    Key("select", "list of strings", "every rule but the opt-in ones",
        "scan, fix", "Rule codes or code prefixes to report (`AD1`, `AD601`, `ALL`). "
        "`--select` replaces it."),
    Key("extend-select", "list of strings", "`[]`", "scan, fix",
        "Rule codes or prefixes reported besides those `select` gives (an opt-in rule such as "
        "`AD001` or `AD911`, or a rule an inherited `select` leaves out). "
        "`--extend-select` adds to it."),
    Key("ignore", "list of strings", "`[]`", "scan, fix",
        "Rule codes or prefixes not to report; the most specific of `select`/`ignore` "
        "decides, `ignore` on a tie. `--ignore` adds to it."),
    Key("extend-ignore", "list of strings", "`[]`", "scan, fix",
        "Rule codes or prefixes not to report, besides `ignore` (kept where a file that "
        "extends this one sets its own `ignore`). `--extend-ignore` adds to it."),
    Key("exclude", "list of globs", "`[]`", "scan, fix",
        "Paths not to walk or scan (gitignore-style, relative to the file's folder). "
        "`--exclude` adds to it."),
    Key("per-file-ignores", "table: glob -> list of codes", "`{}`", "scan, fix",
        "Rule codes or prefixes not reported in the files a glob matches "
        "(`\"tests/**\" = [\"AD1\"]`; `ALL` for every rule)."),
    Key("keep", "list of globs", "`[]`", "scan, fix",
        "Files (or folders) that are a device's own implementation: `anydev fix` never "
        "rewrites them (and says so for each finding); `anydev scan` still reports them."),
    Key("baseline", "string (a path)", "none", "scan",
        "A baseline file (`--write-baseline`): only findings not recorded in it are "
        "reported. `--baseline` replaces it."),
    Key("target-torch", "string `\"X.Y\"`",
        "the lower bound of `torch` the project declares, else the newest release the table "
        "knows", "fix, scan",
        "The oldest PyTorch the code must keep running on: the fixer rewrites a call only "
        "to a replacement that exists in that version (`scan --statistics` shows what each "
        "release unlocks). `--target-torch` replaces it."),
    Key("exit-zero", "boolean", "`false`", "scan, fix",
        "Exit 0 even when findings remain or parts of files went unscanned (usage, "
        "configuration and I/O errors still exit 2). `--exit-zero` sets it."),
    Key("fail-on-unscanned", "boolean", "`true`", "scan, fix",
        "Parts of files that could not be scanned (invalid UTF-8, NUL bytes, a file over "
        "`max-file-size`, a lexical error) make the run exit 1 even without findings."),
    Key("max-file-size", "integer (bytes, >= 0)", "`20971520` (20 MiB)", "scan, fix",
        "Larger files are skipped and reported as unscanned. `--max-file-size` replaces it."),
    Key("respect-gitignore", "boolean", "`true`", "scan, fix",
        "Honour `.gitignore` files and `.git/info/exclude`. `--no-gitignore` turns it off."),
    Key("output-format", "string", "`\"text\"`", "scan",
        "`text` (or `concise`), `full`, `json`, `json-lines`, `sarif`, `github`, `gitlab` or "
        "`junit` (docs/ci.md). `--output-format` replaces it."),
    Key("legacy", "string", "`\"warn\"`", "runtime",
        "The policy for legacy calls at run time: `warn`, `ignore` or `error` "
        "(see docs/compat.md)."),
    Key("legacy-override", "array of tables `{module or path, policy}`", "`[]`", "runtime",
        "Per-module (module-name glob) or per-path (glob) policies; the last match wins."),
    Key("packages", "list of module-name globs", "`[]`", "run --torch, pytest",
        "Modules (with their submodules) in the scope of `anydev run --torch`, "
        "`anydev.torch.install()` and the pytest plugin, besides the `__main__` script."),
    Key("paths", "list of globs", "`[]`", "run --torch, pytest",
        "Source files in that scope, by path (relative to the file's folder)."),
    Key("pytest", "boolean", "`false`", "pytest",
        "Turn on the pytest plugin (`pytest -p anydev`, docs/torch.md) for every pytest run "
        "of the project, as `--anydev` does."),
    Key("pytest-strict", "boolean", "`false`", "pytest",
        "The plugin fails each test that reaches a legacy call whose line is not in the "
        "`baseline`, as `--anydev-strict` does (it turns the plugin on)."),
    Key("pytest-report", "string (a path)", "`\"anydev-report.json\"`", "pytest",
        "Where the plugin writes the runtime report of the session (relative to the file's "
        "folder). `--anydev-report` replaces it."),
)
KEY_NAMES = tuple(k.name for k in KEYS)
_BY_NAME = {k.name: k for k in KEYS}
# Spellings users may write for a key (ruff's, underscores): read as the key.
_ALIASES = {"per_file_ignores": "per-file-ignores", "target_torch": "target-torch",
            "exit_zero": "exit-zero", "fail_on_unscanned": "fail-on-unscanned",
            "max_file_size": "max-file-size", "respect_gitignore": "respect-gitignore",
            "output_format": "output-format", "legacy_override": "legacy-override",
            "extend_select": "extend-select", "extend_ignore": "extend-ignore",
            "pytest_strict": "pytest-strict", "pytest_report": "pytest-report",
            "extend-exclude": "exclude", "extend_exclude": "exclude"}
# Patterns compiled on first use (re's cache): the command line reads this module
# at start-up, and most runs check neither.
_CODE = r"^[A-Za-z]+[0-9]*$"
_VERSION = r"^[0-9]+\.[0-9]+(\.[0-9]+)?$"


class Config:
    """The validated settings of one file (or the defaults when ``path`` is
    None). Paths and globs are absolute or carry their base folder.

    A plain class rather than a dataclass: the command line builds it at
    start-up, and a dataclass costs a millisecond or two to define."""

    def __init__(self, path: Optional[str] = None, root: str = "") -> None:
        self.path = path
        self.root = root  # the folder relative values are relative to
        self.extend: Optional[str] = None  # absolute
        self.select: Optional[list[str]] = None
        self.extend_select: list[str] = []
        self.ignore: list[str] = []
        self.extend_ignore: list[str] = []
        self.exclude: list[str] = []
        self.per_file_ignores: list[tuple[str, list[str]]] = []
        self.keep: list[str] = []
        self.baseline: Optional[str] = None  # absolute
        self.target_torch: Optional[str] = None
        self.exit_zero = False
        self.fail_on_unscanned = True
        self.max_file_size: Optional[int] = None
        self.respect_gitignore = True
        self.output_format: Optional[str] = None
        self.legacy: Optional[str] = None
        self.legacy_override: list[dict] = []  # {"module" or "path": ..., "policy": ...}
        self.packages: list[str] = []
        self.paths: list[str] = []  # absolute path globs
        self.pytest = False
        self.pytest_strict = False
        self.pytest_report: Optional[str] = None  # absolute
        self.set: frozenset = frozenset()  # the keys the file gives (or inherits)
        # the folder a key's relative globs are relative to, where it is not
        # `root`: a key inherited through `extend` keeps its own file's folder
        self.bases: dict[str, str] = {}
        # the files read, this one first, then those it extends: (path, stamp)
        self.chain: list[tuple[str, tuple[int, int]]] = []
        self.warnings: list[str] = []
        self.problems: dict[str, str] = {}  # key -> message of a bad value

    def __repr__(self) -> str:
        return f"Config(path={self.path!r}, keys={sorted(self.set)})"

    def base(self, key: str) -> str:
        """The folder that ``key``'s relative paths and globs are relative to:
        the folder of the file that gave it (one this file extends, or this)."""
        return self.bases.get(key, self.root)

    def where(self, key: Optional[str] = None) -> str:
        if self.path and _is_pyproject(self.path):
            return f"{self.path}: [tool.anydev] {key}" if key else f"{self.path}: [tool.anydev]"
        return f"{self.path}: {key}" if key else str(self.path)

    def check(self, keys: Optional[Iterable[str]] = None) -> "Config":
        """Raises ConfigError for the first bad value among ``keys`` (default:
        every key, in the file's order); returns self."""
        wanted = None if keys is None else set(keys)
        for key, message in self.problems.items():
            if wanted is None or key in wanted or key in ("", "extend"):
                raise ConfigError(message)
        return self


def _is_pyproject(path: str) -> bool:
    return os.path.basename(path) == "pyproject.toml"


# --- reading --------------------------------------------------------------------------

_cache: dict[str, tuple[tuple[int, int], Config]] = {}


def _toml():
    try:
        import tomllib  # Python >= 3.11
        return tomllib
    except ImportError:  # pragma: no cover - Python 3.9 and 3.10
        try:
            import tomli  # type: ignore[import-not-found]
            return tomli
        except ImportError:
            return None


class _Unreadable(ValueError):
    pass


#: The most "dots on a line x lines" a refused file may have to be handed to
#: tomllib for its error message (a few seconds of tomllib at most).
_TOMLLIB_WORK = 4_000_000


def loads_toml(text: str) -> dict:
    """The TOML document ``text``: read by anydev's own reader, which imports
    nothing (tomllib's import is half of the start-up of `anydev scan`), and
    by tomllib only where that reader refuses it (Note [Agreeing with tomllib]
    in _toml.py): tomllib's result, or its error (a ValueError with tomllib's
    message). Raises _Unreadable without tomllib or tomli, RecursionError for
    arrays nested past Python's recursion limit."""
    from . import toml as own

    try:
        return own.loads(text)
    except own.Invalid:
        pass
    # tomllib's time is quadratic in a key's parts and in a header's parts
    # times the keys under it (Note [Linear in the keys] in _toml.py): a file
    # whose dots could make it so is not handed on, and gets no more than
    # anydev's own verdict.
    per_line = [line.count(".") for line in text.split("\n")]
    dots = max(per_line)
    if dots * max(dots, len(per_line)) > _TOMLLIB_WORK:
        raise ValueError(f"refused by anydev's reader; one line has {dots} dots, too many to "
                         f"ask tomllib where the error is") from None
    toml = _toml()
    if toml is None:  # pragma: no cover - Python < 3.11 without tomli
        raise _Unreadable
    return toml.loads(text)


def _parse(path: str, raw: bytes) -> dict:
    if raw.startswith(b"\xef\xbb\xbf"):
        # tomllib's "Invalid statement (at line 1, column 1)" names nothing one can see
        raise ConfigError(f"{path}: not valid TOML: it starts with a byte-order mark (U+FEFF), "
                          f"which TOML does not allow (tomllib and tomli refuse it too); save "
                          f"it as UTF-8 without one") from None
    try:
        return loads_toml(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not valid UTF-8 ({e.reason} at byte {e.start})") from None
    except _Unreadable:  # pragma: no cover - Python < 3.11 without tomli
        raise ConfigError(f"{path}: not valid TOML, and reading why needs Python 3.11 or "
                          f"newer, or the `tomli` package (pip install tomli)") from None
    except RecursionError:
        raise ConfigError(f"{path}: cannot read: arrays or tables nested too deeply") from None
    except ValueError as e:  # TOMLDecodeError
        what = "cannot read [tool.anydev]: " if _is_pyproject(path) else ""
        hint = ""
        if b"\r" in raw and raw.replace(b"\r\n", b"").find(b"\r") >= 0:
            hint = (" (it has a line that ends in a bare carriage return: TOML's end in \\n "
                    "or \\r\\n)")
        raise ConfigError(f"{path}: {what}not valid TOML: {e}{hint}") from None


#: The largest configuration file read: pyproject.toml files are a few KB, and
#: anydev's reader took 1.2-1.4 s for 4 MiB of `"src/dirN/**" = ["AD1", "AD2"]`
#: lines under [tool.anydev.per-file-ignores] (_toml.loads, time.perf_counter).
MAX_CONFIG_SIZE = 4 << 20


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_CONFIG_SIZE + 1)
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror or e}") from None
    if len(data) > MAX_CONFIG_SIZE:
        # a 2 GB file was read whole and parsed, for minutes
        raise ConfigError(f"{path}: cannot read: over {MAX_CONFIG_SIZE >> 20} MiB, too large "
                          f"for a configuration file")
    return data


def _section(path: str, data: dict) -> Optional[Any]:
    if _is_pyproject(path):
        tool = data.get("tool")
        return tool.get("anydev") if isinstance(tool, dict) else None
    return data


def _may_hold_table(raw: bytes) -> bool:
    """Whether a pyproject.toml may hold ``[tool.anydev]`` (or mean to: a
    broken ``[tool.anydev`` is parsed, and its error reported). It may not when
    every ``anydev`` in it starts a quoted string that is no key (not followed
    by ``.``, ``]`` or ``=``, with spaces and tabs allowed between): a
    dependency such as ``"anydev>=0.1"``. Such a file is not parsed at all.

    A basic string may spell a key with escapes (``[tool."\\u0061nydev"]`` is
    ``[tool.anydev]``), which no byte search for ``anydev`` sees: a file with
    a ``\\u``, ``\\U`` or ``\\x`` (TOML 1.1's) anywhere is parsed."""
    if b"\\u" in raw or b"\\U" in raw or b"\\x" in raw:
        return True
    at = raw.find(b"anydev")
    while at >= 0:
        if at == 0 or raw[at - 1:at] not in (b'"', b"'"):
            return True  # a bare key, a comment, a broken header: parse
        j = at + 6
        if raw[j:j + 1] == raw[at - 1:at]:
            j += 1
            while raw[j:j + 1] in (b" ", b"\t"):
                j += 1
            if raw[j:j + 1] in (b".", b"]", b"="):
                return True  # the quoted key "anydev"
        at = raw.find(b"anydev", at + 1)
    return False


def _config_in(d: str) -> Optional[str]:
    """The folder's configuration file (``anydev.toml``, else a
    ``pyproject.toml`` with ``[tool.anydev]``), or None."""
    candidate = os.path.join(d, "anydev.toml")
    if os.path.isfile(candidate):
        return candidate
    candidate = os.path.join(d, "pyproject.toml")
    if os.path.isfile(candidate):
        raw = _read(candidate)
        if _may_hold_table(raw) and _section(candidate, _parse(candidate, raw)) is not None:
            return candidate
    return None


def find(start: str) -> Optional[str]:
    """The configuration file that applies at ``start`` (a folder), or None."""
    d = os.path.abspath(start)
    while True:
        found = _config_in(d)
        if found is not None:
            return found
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


class Finder:
    """:func:`find` for many folders, each folder's answer found once: the
    configuration of each file of a tree (ruff's hierarchical
    configuration), at a few stat calls per folder."""

    __slots__ = ("_memo",)

    def __init__(self) -> None:
        self._memo: dict[str, Optional[str]] = {}

    def find(self, folder: str) -> Optional[str]:
        memo = self._memo
        d = os.path.abspath(folder)
        walked = []
        while True:
            if d in memo:
                found = memo[d]
                break
            walked.append(d)
            found = _config_in(d)
            if found is not None:
                break
            parent = os.path.dirname(d)
            if parent == d:
                break
            d = parent
        for w in walked:
            memo[w] = found
        return found

    def for_file(self, path: str) -> Optional[str]:
        """The configuration file of the file ``path``, or None."""
        return self.find(os.path.dirname(os.path.abspath(path)))


def load(start: str) -> Config:
    """The configuration that applies at ``start``: the file :func:`find`
    finds, else the defaults."""
    path = find(start)
    return Config(root=os.path.abspath(start)) if path is None else load_file(path)


def load_file(path: str) -> Config:
    """Reads and validates one file (a ``pyproject.toml``: its
    ``[tool.anydev]``; any other name: its top level), with what it inherits
    through ``extend`` (Note [Extending a configuration]). Values that are
    bad are recorded in ``problems`` (see :meth:`Config.check`); a file that
    cannot be read or parsed raises ConfigError. Cached by the modification
    time of each file read."""
    return _load(os.path.abspath(path), path, ())


def _stamp(abspath: str, shown: str) -> tuple[int, int]:
    try:
        st = os.stat(abspath)
    except OSError as e:
        raise ConfigError(f"{shown}: cannot read: {e.strerror or e}") from None
    return (st.st_mtime_ns, st.st_size)


def _fresh(chain: list[tuple[str, tuple[int, int]]]) -> bool:
    for p, stamp in chain:
        try:
            st = os.stat(p)
        except OSError:
            return False
        if (st.st_mtime_ns, st.st_size) != stamp:
            return False
    return True


def _load(abspath: str, shown: str, seen: tuple[str, ...]) -> Config:
    hit = _cache.get(abspath)
    if hit is not None and _fresh(hit[1].chain):
        return hit[1]
    stamp = _stamp(abspath, shown)
    if not os.path.isfile(abspath):
        raise ConfigError(f"{shown}: not a regular file")
    data = _parse(shown, _read(abspath))
    section = _section(abspath, data)
    cfg = Config(path=abspath, root=os.path.dirname(abspath))
    cfg.chain = [(abspath, stamp)]
    if section is None:
        section = {}
    if not isinstance(section, dict):
        cfg.problems[""] = f"{cfg.where()} must be a table"
    else:
        _fill(cfg, section)
    if cfg.extend is not None and "extend" not in cfg.problems:
        cfg = _extended(cfg, seen + (abspath,))
    _cache[abspath] = (stamp, cfg)
    return cfg


# Note [Extending a configuration]
# As ruff's `extend`: `extend = "../pyproject.toml"` names a file (relative to
# the folder of the file that says it) whose keys this one inherits. A key
# this file gives replaces the inherited one whole (lists are not merged),
# and keeps the folder of the file that gave it for its relative paths and
# globs (Config.bases): an inherited `exclude = ["gen/"]` is the parent
# folder's `gen/`. `extend-select` and `extend-ignore` add up along the chain,
# except that a file that sets `select` starts the selection afresh (so an
# `extend-select` above it no longer applies), as ruff's layers do. The
# files may extend further; a cycle, or a file that cannot be read, is an
# error of the `extend` key (which every reader checks).

def _extended(cfg: Config, seen: tuple[str, ...]) -> Config:
    """``cfg`` with what its ``extend`` file gives (Note [Extending a configuration])."""
    target = cfg.extend
    assert target is not None
    if target in seen:
        names = " -> ".join(os.path.relpath(p, cfg.root) for p in (*seen, target))
        cfg.problems["extend"] = f"{cfg.where()}: `extend`: a cycle: {names}"
        return cfg
    try:
        parent = _load(target, target, seen)
    except ConfigError as e:
        cfg.problems["extend"] = f"{cfg.where()}: `extend`: {e}"
        return cfg
    if "extend" in parent.problems:
        cfg.problems["extend"] = f"{cfg.where()}: `extend`: {parent.problems['extend']}"
        return cfg
    out = Config(path=cfg.path, root=cfg.root)
    own = cfg.set
    for key in KEY_NAMES:
        if key in ("extend", "extend-select", "extend-ignore"):
            continue
        attr = key.replace("-", "_")
        src = cfg if key in own else parent
        setattr(out, attr, getattr(src, attr))
        if key not in own and key in parent.set:
            out.bases[key] = parent.base(key)
    out.extend = cfg.extend
    out.extend_select = list(cfg.extend_select) if "select" in own else \
        parent.extend_select + cfg.extend_select
    out.extend_ignore = parent.extend_ignore + cfg.extend_ignore
    out.set = own | parent.set
    out.warnings = parent.warnings + cfg.warnings
    out.problems = dict(cfg.problems)
    for key, message in parent.problems.items():
        if key not in own or key in ("", "extend"):
            out.problems.setdefault(key, message)
    out.chain = cfg.chain + parent.chain
    return out


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest choice, or ``""``."""
    close = close_match(word, choices)
    return f" (did you mean {close!r}?)" if close is not None else ""


# Note [Did you mean]
# difflib.get_close_matches(word, choices, n=1, cutoff=0.6) costs 25-50 us a
# word against the 16 keys (more for a long word: it indexes all of it), so a
# config of 10,000 unknown keys spent 0.3 s on its warnings: it builds a
# SequenceMatcher per word and runs quick_ratio, a Python loop over the
# characters, for each choice. close_match gives its answer (a test compares
# the two on random words) for less. difflib keeps a choice whose ratio()
# reaches the cutoff, asking the cheaper upper bounds real_quick_ratio (the
# lengths) and quick_ratio (the multiset intersection of the characters)
# first, and returns the largest (ratio, choice). Any upper bound of ratio()
# may stand in for those, so close_match asks, with the same float
# expressions: the lengths; then a bound from bit masks (the characters the
# two share, plus the repeats of either, whichever has fewer: an AND and a
# popcount); then the exact intersection (in C's loops: map, min, sum); and
# ratio(), of one SequenceMatcher holding the word, only for the choices left,
# best quick_ratio first, until a quick_ratio is below the best ratio found.
# A choice's length, mask and counts are made once (_SHAPES, _CHOICES), the
# word's only when a choice has a length near enough, so a word far longer or
# shorter than every choice (a key of a megabyte) costs one len() per choice.
# Measured (python -m timeit -s 'from anydev._common.config import close_match,
# KEY_NAMES; import difflib; w = [f"sel{i}ect" for i in range(10000)] +
# [f"zq{i}xeee" for i in range(10000)]' '[close_match(x, KEY_NAMES) for x in
# w]', and the same with difflib.get_close_matches(x, KEY_NAMES, n=1,
# cutoff=0.6)): 526 ms with difflib, 202 ms with close_match (10 us a word: a
# typo of `select` needs its ratio(), 15 us; `zqNxeee`, 5 us). `anydev scan
# x.py` under an anydev.toml of the 10,000 keys `selNect`: 0.43 s before,
# 0.27 s after; of the 10,000 `zqNxeee`: 0.36 s, 0.15 s (/usr/bin/time).

_BITS: dict[str, int] = {}  # a character of some choice -> its bit
# a choice -> (its length, its characters' bits, its repeats, its distinct
# characters, their counts, as many zeros)
_SHAPES: dict[str, tuple[int, int, int, tuple[str, ...], tuple[int, ...], tuple[int, ...]]] = {}
_CHOICES: dict[tuple[str, ...], list] = {}  # a tuple of choices -> their shapes
_popcount = getattr(int, "bit_count", None) or (lambda n: bin(n).count("1"))  # Python 3.9


def _shape(x: str) -> tuple[int, int, int, tuple[str, ...], tuple[int, ...], tuple[int, ...]]:
    from collections import Counter

    n = Counter(x)
    mask = 0
    for c in n:
        bit = _BITS.get(c)
        if bit is None:
            bit = _BITS[c] = 1 << len(_BITS)
        mask |= bit
    shape = _SHAPES[x] = (len(x), mask, len(x) - len(n), tuple(n), tuple(n.values()),
                          (0,) * len(n))
    return shape


def close_match(word: str, choices: Iterable[str], cutoff: float = 0.6) -> Optional[str]:
    """``difflib.get_close_matches(word, choices, n=1, cutoff=cutoff)``'s one
    answer, or None (Note [Did you mean])."""
    key = choices if isinstance(choices, tuple) else tuple(choices)
    shapes = _CHOICES.get(key)
    if shapes is None:
        if len(_CHOICES) >= 64:
            _CHOICES.clear()
        shapes = _CHOICES[key] = [(x, _SHAPES.get(x) or _shape(x)) for x in key]
    lb = len(word)
    mask = -1  # the word's characters' bits, its repeats and its counts, made when needed
    repeats = 0
    counts: Optional[dict[str, int]] = None
    near: list[tuple[float, str]] = []  # (quick_ratio, choice) of those that reach the cutoff
    for x, (la, xmask, xrepeats, chars, ns, zeros) in shapes:
        length = la + lb
        if not length:
            near.append((1.0, x))  # two empty strings: difflib's ratios are 1.0
            continue
        if 2.0 * min(la, lb) / length < cutoff:  # real_quick_ratio
            continue
        if mask < 0:
            distinct = set(word)
            mask = sum([_BITS.get(c, 0) for c in distinct])
            repeats = lb - len(distinct)
        if 2.0 * (_popcount(xmask & mask) + min(xrepeats, repeats)) / length < cutoff:
            continue
        if counts is None:
            from collections import Counter

            counts = Counter(word)
        quick = 2.0 * sum(map(min, ns, map(counts.get, chars, zeros))) / length
        if quick >= cutoff:
            near.append((quick, x))
    if not near:
        return None
    best: Optional[tuple[float, str]] = None
    matcher = None
    # ratio() <= quick_ratio(): past a quick_ratio below the best ratio, none can win
    for quick, x in sorted(near, reverse=True):
        if best is not None and (quick, x) < best:
            break
        if not lb and not x:
            score = 1.0
        else:
            if matcher is None:
                import difflib

                matcher = difflib.SequenceMatcher()
                matcher.set_seq2(word)
            matcher.set_seq1(x)
            score = matcher.ratio()
        if score >= cutoff and (best is None or (score, x) > best):
            best = (score, x)
    return None if best is None else best[1]


def _fill(cfg: Config, section: dict) -> None:
    given = []
    for raw_key, value in section.items():
        key = _ALIASES.get(raw_key, raw_key)
        if key not in _BY_NAME:
            cfg.warnings.append(f"{cfg.where()}: unknown key {raw_key!r}"
                                f"{did_you_mean(raw_key, KEY_NAMES)}; ignored")
            continue
        if key in given:
            cfg.warnings.append(f"{cfg.where()}: {raw_key!r} repeats {key!r}; the last wins")
        given.append(key)
        try:
            _set(cfg, key, value)
        except ConfigError as e:
            cfg.problems.setdefault(key, str(e))
    cfg.set = frozenset(given)


def _strings(cfg: Config, key: str, value: Any, *, comma: bool = False) -> list[str]:
    if comma and isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{cfg.where()}: `{key}` must be a list of strings, not {value!r}")
    return [v.strip() for v in value if v.strip()]


def _codes(cfg: Config, key: str, value: Any) -> list[str]:
    if isinstance(value, str):
        # as ruff: a string is no list. Read as one (it was, for `select`), a
        # typo such as `ignore = "AD107"` passed where a list was meant.
        listed = ", ".join(f'"{v.strip()}"' for v in value.split(",") if v.strip())
        raise ConfigError(f"{cfg.where()}: `{key}` must be a list of strings, not the string "
                          f"{value!r}: write [{listed}]")
    out = []
    for v in _strings(cfg, key, value):
        for item in v.split(","):
            item = item.strip()
            if item and not _is_code(item):
                raise ConfigError(f"{cfg.where()}: `{key}`: {item!r} is not a rule code or "
                                  f"a prefix of one (AD101, AD1, ALL)")
            if item:
                out.append(item)
    return out


_DIGITS = frozenset("0123456789")


def _is_code(item: str) -> bool:
    """Whether ``item`` is ``_CODE``'s (letters, then digits), checked without
    ``re``: a [tool.anydev] select or ignore is read at every start-up."""
    letters = len(item) - len(item.lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"))
    return letters > 0 and _DIGITS.issuperset(item[letters:])


def _match(pattern: str, text: str) -> bool:
    import re

    return re.match(pattern, text) is not None


def _bool(cfg: Config, key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{cfg.where()}: `{key}` must be true or false, not {value!r}")
    return value


def _set(cfg: Config, key: str, value: Any) -> None:
    where = f"{cfg.where()}: `{key}`"
    if key in ("select", "ignore", "extend-select", "extend-ignore"):
        setattr(cfg, key.replace("-", "_"), _codes(cfg, key, value))
    elif key == "extend":
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(f"{where} must be a path (a non-empty string), not {value!r}")
        cfg.extend = os.path.normpath(os.path.join(cfg.root, os.path.expanduser(value)))
    elif key == "pytest-report":
        if not isinstance(value, str) or not value:
            raise ConfigError(f"{where} must be a path (a non-empty string), not {value!r}")
        cfg.pytest_report = os.path.join(cfg.root, value)
    elif key in ("exclude", "keep"):
        setattr(cfg, key, _strings(cfg, key, value, comma=key == "exclude"))
    elif key == "per-file-ignores":
        if not isinstance(value, dict):
            raise ConfigError(f"{where} must be a table of glob = [codes]")
        cfg.per_file_ignores = []
        for glob, codes in value.items():
            if not glob.strip():
                raise ConfigError(f"{where}: an empty glob")
            cfg.per_file_ignores.append((glob, _codes(cfg, f"{key}.{glob!r}", codes)))
    elif key == "baseline":
        if not isinstance(value, str) or not value:
            raise ConfigError(f"{where} must be a path (a non-empty string), not {value!r}")
        cfg.baseline = os.path.join(cfg.root, value)
    elif key == "target-torch":
        cfg.target_torch = check_target_torch(value, where)
    elif key in ("exit-zero", "fail-on-unscanned", "respect-gitignore", "pytest",
                 "pytest-strict"):
        setattr(cfg, key.replace("-", "_"), _bool(cfg, key, value))
    elif key == "max-file-size":
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ConfigError(f"{where} must be a number of bytes >= 0, not {value!r}")
        cfg.max_file_size = value
    elif key == "output-format":
        if value not in OUTPUT_FORMATS:
            raise ConfigError(f"{where}: {value!r} is not one of {', '.join(OUTPUT_FORMATS)}"
                              f"{did_you_mean(str(value), OUTPUT_FORMATS)}")
        cfg.output_format = value
    elif key == "legacy":
        cfg.legacy = check_policy(value, cfg.where("legacy"))
    elif key == "legacy-override":
        cfg.legacy_override = _overrides(cfg, value)
    elif key == "packages":
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise ConfigError(f"{cfg.where()}: `packages` must be a list of strings; "
                              f"got {value!r}")
        cfg.packages = list(value)
    elif key == "paths":
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise ConfigError(f"{cfg.where()}: `paths` must be a list of strings; got {value!r}")
        cfg.paths = [v if os.path.isabs(v) else os.path.join(cfg.root, v) for v in value]


def check_policy(value: Any, where: str) -> str:
    if value not in POLICIES:
        raise ConfigError(f"{where}: {value!r} is not a policy; expected one of "
                          f"{', '.join(POLICIES)}{did_you_mean(str(value), POLICIES)}")
    return str(value)


def check_target_torch(value: Any, where: str) -> str:
    """``"2.1"`` -> ``"2.1"``; anything but MAJOR.MINOR[.PATCH] is a
    ConfigError (the fixer's own table, anydev._migrate.torch_versions, checks the rest)."""
    if not isinstance(value, str) or not _match(_VERSION, value.strip()):
        raise ConfigError(f"{where}: {value!r} is not a PyTorch version MAJOR.MINOR "
                          f"(such as \"2.1\")")
    return value.strip()


def _overrides(cfg: Config, value: Any) -> list[dict]:
    if not isinstance(value, list):
        raise ConfigError(f"{cfg.path}: [tool.anydev] legacy-override must be an array of "
                          f"tables")
    out = []
    for i, o in enumerate(value):
        where = f"{cfg.path}: [[tool.anydev.legacy-override]] #{i + 1}"
        if not isinstance(o, dict):
            raise ConfigError(f"{where} must be a table")
        unknown = set(o) - {"module", "path", "policy"}
        if unknown:
            raise ConfigError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}"
                              f"{did_you_mean(sorted(unknown)[0], ('module', 'path', 'policy'))}")
        if ("module" in o) == ("path" in o):
            raise ConfigError(f"{where}: give exactly one of `module` or `path`")
        if "policy" not in o:
            raise ConfigError(f"{where}: `policy` is missing")
        pattern = o.get("module", o.get("path"))
        if not isinstance(pattern, str) or not pattern:
            raise ConfigError(f"{where}: the pattern must be a non-empty string")
        out.append({("module" if "module" in o else "path"): pattern,
                    "policy": check_policy(o["policy"], f"{where} policy")})
    return out


# --- globs ------------------------------------------------------------------------------


def _glob_match(glob: str, path: str) -> bool:
    from anydev._scanner._scan import glob_match  # the scanner's own (linear) matcher

    return glob_match(glob, path)


class Glob:
    """A gitignore-style pattern relative to the folder ``base`` (see the
    module docstring). ``match(path)`` takes a path absolute or relative to
    the current directory, and also matches when a folder above it (up to
    ``base``) matches."""

    __slots__ = ("pattern", "base", "_glob", "_anchored", "_dir_only")

    def __init__(self, pattern: str, base: str, *, anchored: Optional[bool] = None) -> None:
        self.pattern = pattern
        p = pattern.strip()
        self._dir_only = p.endswith("/")
        p = p.rstrip("/")
        self._anchored = ("/" in p) if anchored is None else anchored
        self._glob = p.lstrip("/")
        self.base = os.path.abspath(base) if base else ""

    def __repr__(self) -> str:
        return f"Glob({self.pattern!r}, {self.base!r})"

    def match(self, path: str, is_dir: bool = False) -> bool:
        if not self._glob:
            return False
        if not self.base:
            return self.match_relative(path, is_dir)
        p = os.path.abspath(path).replace(os.sep, "/")
        base = self.base.replace(os.sep, "/")
        if base == "/":
            rel = p[1:]
        elif p.startswith(base + "/"):
            rel = p[len(base) + 1:]
        elif self._anchored:
            return False
        else:
            rel = p.lstrip("/")  # outside the base: an unanchored pattern matches names
        return self.match_relative(rel, is_dir)

    def match_relative(self, rel: str, is_dir: bool = False) -> bool:
        """Matches a '/'-separated path already relative to the base."""
        parts = [s for s in rel.split("/") if s]
        for k in range(len(parts), 0, -1):
            if self._dir_only and k == len(parts) and not is_dir:
                continue
            s = "/".join(parts[:k]) if self._anchored else parts[k - 1]
            if _glob_match(self._glob, s):
                return True
        return False


def _old_leading_star(p: str, sep: str) -> str:
    # fnmatch's `*` crossed separators: a leading `*` component matched at any
    # depth, and still does.
    if p == "*":
        return "**"
    if p.startswith("*" + sep) and not p.startswith("**"):
        return "**" + p[1:]
    return p


def module_glob(pattern: str) -> Glob:
    """A module-name glob (``myproj``, ``myproj.*``, ``**.tests``): always
    anchored; covers the submodules of what it matches."""
    p = _old_leading_star(pattern.strip(), ".")
    return Glob(p.replace(".", "/"), "", anchored=True)


def match_module(g: Glob, module: str) -> bool:
    return g.match_relative(module.replace(".", "/"))


def runtime_path_glob(pattern: str, base: Optional[str]) -> Glob:
    """A path glob of the runtime policy (``ANYDEV_LEGACY``, ``set_policy``,
    ``legacy-override.path``): relative to ``base`` (default: the current
    directory); an absolute one is absolute, and one that starts with a
    wildcard (``*/vendor/*``, ``*.py``) matches anywhere, as they did when
    these were fnmatch patterns."""
    p = pattern.strip()
    if os.path.isabs(p):
        return Glob(p, "/")
    if p.startswith(("*", "?", "[")) and base is None:
        return Glob(_old_leading_star(p, "/"), "/")
    return Glob(p, base or os.getcwd())


def compile_globs(patterns: Sequence[str], base: str) -> list[Glob]:
    return [Glob(p, base) for p in patterns]


def markdown_table() -> str:
    """The table of :data:`KEYS` that docs/configuration.md holds (a test
    checks that the two agree)."""
    rows = ["| key | type | default | read by | meaning |", "|---|---|---|---|---|"]
    for k in KEYS:
        rows.append(f"| `{k.name}` | {k.type} | {k.default} | {k.readers} | {k.meaning} |")
    return "\n".join(rows) + "\n"
