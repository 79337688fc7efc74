"""Dispatch ladders collapsed into one ``torch.accelerator`` form.

    if torch.cuda.is_available():                 device = (
        device = torch.device("cuda")                 torch.accelerator.current_accelerator(
    elif torch.xpu.is_available():          ->            check_available=True)
        device = torch.device("xpu")                  or torch.device("cpu")
    elif torch.backends.mps.is_available():       )
        device = torch.device("mps")
    else:
        device = torch.device("cpu")

A ladder of availability checks, one per device, whose branches are the same
code but for the device's name (``"cuda"``, ``f"cuda:{rank}"``,
``torch.device("cuda")``), is one decision: "the available accelerator, else
the CPU". Its branches are compared as syntax trees with each branch's own
device name put out of the way; where they are equal, the ladder runs on every
device it names exactly what the one statement runs (Note [Collapsing a
dispatch ladder]), so the collapse is made in safe mode too. Anything else (a
branch with one more statement, a branch for a case that is not a device, a
branch that uses ``torch.cuda.*`` or another device's string, comments in the
branches left out, a ``# noqa``) leaves the ladder to the fixer's other rules,
which refuse it with their reasons as before.

    got = collapse(data, path, findings, target, keep, frozen)
    # None: no ladder collapsed; else (new bytes, findings moved to the new
    # bytes (id -> the original), the original findings the collapse applied)
"""

from __future__ import annotations

import ast
import copy
import io
import re
import tokenize
from typing import Optional, Sequence

from anydev import scan as _scan
from .analysis import statements
from .evidence import _device_string
from .python_tree import walk as _walk
from .text import _Text, split_lines
from .versions import _target_refusals

__all__ = ["collapse", "parsed_tree", "pre_pass", "post_pass"]

#: The availability checks of a ladder: the module under the torch name -> the device.
_CHECKS = {("cuda",): "cuda", ("xpu",): "xpu", ("backends", "mps"): "mps", ("mps",): "mps",
           ("npu",): "npu", ("hpu",): "hpu", ("mlu",): "mlu", ("musa",): "musa",
           ("mtia",): "mtia",
           # the generic check a rewrite (or a half migration) put in a branch: true
           # wherever a device's own check is (Note [Collapsing a dispatch ladder])
           ("accelerator",): "accelerator"}
#: torch's device modules: a branch that uses one is not device-generic.
_DEVICE_MODULES = frozenset({"cuda", "xpu", "mps", "npu", "hpu", "mlu", "musa", "mtia",
                             "backends"})
#: Methods and attributes named for a device (`.cuda()`, `.is_cuda`).
_DEVICE_ATTRS = frozenset({"cuda", "is_cuda", "xpu", "is_xpu", "mps", "is_mps", "npu"})
_PLACE = "\x00anydev-device\x00"
_QUOTE = re.compile(r"^([rRbBuUfF]*)('''|\"\"\"|'|\")")


def _dotted(node: ast.AST) -> Optional[list[str]]:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return parts[::-1]


def _check_device(test: ast.AST, roots: set[str]) -> Optional[tuple[str, str]]:
    """(device, torch's name) for `torch.<device>.is_available()`, else None."""
    if not (isinstance(test, ast.Call) and not test.args and not test.keywords and
            isinstance(test.func, ast.Attribute) and test.func.attr == "is_available"):
        return None
    parts = _dotted(test.func.value)
    if not parts or parts[0] not in roots:
        return None
    dev = _CHECKS.get(tuple(parts[1:]))
    return (dev, parts[0]) if dev else None


def _branch_test(test: ast.AST, roots: set[str]
                 ) -> Optional[tuple[str, str, list[ast.expr]]]:
    """(device, torch's name, the conditions `and`-ed after the check) of a
    ladder's test: `torch.<device>.is_available()`, alone or first in an `and`
    whose other operands use no device but through `torch.<device>.
    device_count()` (`torch.cuda.is_available() and torch.cuda.device_count() >
    1`); None otherwise."""
    if not (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And)):
        got = _check_device(test, roots)
        return (got[0], got[1], []) if got else None
    got = _check_device(test.values[0], roots)
    if got is None:
        return None
    dev, root = got
    rest = test.values[1:]
    for operand in rest:
        for node in _walk(operand):  # (not ast.walk: test_fix_cost counts those)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                    _device_string(node.value):
                return None
            if isinstance(node, ast.Attribute):
                parts = _dotted(node)
                if parts and parts[0] in roots and len(parts) > 1:
                    if (parts[1] in _DEVICE_MODULES or parts[1] == "accelerator") and \
                            not _count_of(node, parts, dev, root):
                        return None
                elif node.attr in _DEVICE_ATTRS:
                    return None
    return dev, root, rest


def _count_of(node: ast.Attribute, parts: list[str], dev: str, root: str) -> bool:
    """Whether ``node`` (dotted ``parts``) is the device's own `device_count`
    (or the module holding it, on the way down to it)."""
    if parts[0] != root:
        return False
    if parts[-1] == "device_count":
        return _CHECKS.get(tuple(parts[1:-1])) == dev
    return _CHECKS.get(tuple(parts[1:])) == dev


def _count_calls(operands: list[ast.expr], root: str) -> list[ast.Call]:
    """The `torch.<device>.device_count()` calls of a test's other operands."""
    return [n for op in operands for n in _walk(op)
            if isinstance(n, ast.Call) and not n.args and not n.keywords and
            isinstance(n.func, ast.Attribute) and n.func.attr == "device_count" and
            (_dotted(n.func) or [""])[0] == root]


def _rest_normal(operands: list[ast.expr], root: str) -> str:
    """The other operands' syntax with each device's count call made one name."""
    mod = ast.Module(body=[ast.Expr(copy.deepcopy(op)) for op in operands], type_ignores=[])
    counts = {id(c) for c in _count_calls([e.value for e in mod.body], root)}

    class _Count(ast.NodeTransformer):
        def visit_Call(self, node):
            if id(node) in counts:
                return ast.Name(_PLACE)
            return self.generic_visit(node)

    return ast.dump(_Count().visit(mod))


def _torch_roots(tree: ast.Module) -> set[str]:
    """The module-level names `import torch` binds."""
    out = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "torch":
                    out.add(a.asname or "torch")
    return out


class _Normal(ast.NodeTransformer):
    """A branch's code with its device's name put out of the way (and counted)."""

    def __init__(self, dev: str) -> None:
        self.dev = dev
        self.count = 0

    def visit_Constant(self, node):
        if isinstance(node.value, str) and node.value == self.dev:
            self.count += 1
            return ast.Constant(_PLACE)
        return node

    def visit_JoinedStr(self, node):
        head = node.values[0] if node.values else None
        if isinstance(head, ast.Constant) and isinstance(head.value, str) and \
                head.value.startswith(self.dev + ":"):
            self.count += 1
            rest = [ast.Constant(_PLACE + head.value[len(self.dev):])] + \
                [self.visit(v) for v in node.values[1:]]
            return ast.JoinedStr(values=rest)
        return self.generic_visit(node)


def _normal(body: list[ast.stmt], dev: str) -> tuple[str, int]:
    n = _Normal(dev)
    mod = n.visit(ast.Module(body=copy.deepcopy(body), type_ignores=[]))
    return ast.dump(mod), n.count


def _specific(body: list[ast.stmt], dev: str, roots: set[str]) -> Optional[str]:
    """Why the branch of ``dev`` is not generic but for its device's name, or None."""
    normal = _Normal(dev).visit(ast.Module(body=copy.deepcopy(body), type_ignores=[]))
    for node in ast.walk(normal):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                node.value != dev and _device_string(node.value):
            return f"it names another device ({node.value!r})"
        if isinstance(node, ast.Attribute):
            if node.attr in _DEVICE_ATTRS:
                return f"it uses `.{node.attr}`"
            parts = _dotted(node)
            if parts and parts[0] in roots and len(parts) > 1 and parts[1] in _DEVICE_MODULES:
                return f"it uses `{'.'.join(parts[:2])}`"
    return None


class _Ladder:
    """An if/elif ladder: its node, its branches (device, body), its `else`
    and the name torch has in it (a plain class: dataclasses is not imported
    at the fixer's start-up, tests/python/fix/test_fix_cost.py)."""

    __slots__ = ("node", "branches", "orelse", "root", "rests")

    def __init__(self, node: ast.If, branches: list, orelse: list, root: str,
                 rests: Optional[dict] = None) -> None:
        self.node, self.branches, self.orelse, self.root = node, branches, orelse, root
        # device -> the conditions its check is `and`-ed with (_branch_test)
        self.rests: dict = rests or {}


def _ladders(tree: ast.Module, text: str, roots: set[str]) -> list[_Ladder]:
    """The `if`/`elif` ladders whose every test is a device's availability check."""
    out = []
    lines = split_lines(text)
    # an `if` is a statement: the statement lists hold every one, in walk's
    # order (analysis.statements), without a visit of each expression node
    ifs = [n for n in statements(tree) if type(n) is ast.If]
    # an `elif` is a branch of the ladder above it, never a ladder of its own
    inner = {id(n.orelse[0]) for n in ifs
             if len(n.orelse) == 1 and isinstance(n.orelse[0], ast.If)
             and lines[n.orelse[0].lineno - 1][n.orelse[0].col_offset:].startswith("elif")}
    for node in ifs:
        if id(node) in inner:
            continue
        branches, cur, root = [], node, None
        rests: dict = {}
        while True:
            got = _branch_test(cur.test, roots)
            if got is None:
                branches = []
                break
            if root is not None and got[1] != root:
                branches = []
                break
            root = got[1]
            branches.append((got[0], cur.body))
            rests.setdefault(got[0], got[2])
            nxt = cur.orelse[0] if len(cur.orelse) == 1 and isinstance(cur.orelse[0], ast.If) \
                else None
            if nxt is not None and id(nxt) in inner:
                cur = nxt
                continue
            orelse = cur.orelse
            break
        if len(branches) >= 2:
            out.append(_Ladder(node, branches, orelse, root, rests))
    return out


def _comments(src: str) -> list[tuple[int, str]]:
    """(line, text) of each comment of ``src``."""
    out = []
    try:
        for t in tokenize.generate_tokens(io.StringIO(src).readline):
            if t.type == tokenize.COMMENT:
                out.append((t.start[0], t.string))
    except (tokenize.TokenError, SyntaxError):
        return [(0, "#")]
    return out


def _why_not(lad: _Ladder, text: _Text, roots: set[str]) -> Optional[str]:
    """Why the ladder is not one decision of the device's name (None: it is)."""
    devs = [d for d, _ in lad.branches if d != "accelerator"]
    if len(set(devs)) != len(devs):
        return "a device is checked twice"
    tdev, tbody = _template(lad)
    if tdev is None:
        return "no branch is CUDA's"
    want, n = _normal(tbody, tdev)
    if tdev == "accelerator" and n:
        return "the generic branch names a device"
    rest = _rest_normal(lad.rests.get(tdev, []), lad.root)
    if any(_rest_normal(lad.rests.get(d, []), lad.root) != rest for d, _ in lad.branches):
        return "the checks are `and`-ed with different conditions"
    for dev, body in lad.branches:
        got, _ = _normal(body, dev)
        if got != want:
            return (f"the {dev} branch (line {body[0].lineno}) is not the CUDA branch's code "
                    "with its device's name")
        why = _specific(body, dev, roots)
        if why:
            return f"the {dev} branch is not generic: {why}"
    for _, body in lad.branches + [("", lad.orelse)]:
        if body:
            ls = text.line_starts()[body[0].lineno - 1]
            if text.text[ls:text.index_of_ast(body[0].lineno, body[0].col_offset)].strip():
                return "a branch on the line of its test"
    return None


def _template(lad: _Ladder) -> tuple[Optional[str], list[ast.stmt]]:
    """The branch the collapsed code is written from: CUDA's, else the first
    under the generic check (whose code names no device); (None, []) for neither."""
    for want in ("cuda", "accelerator"):
        for dev, body in lad.branches:
            if dev == want:
                return dev, body
    return None, []


def _span_lines(text: _Text, first: int, last: int) -> str:
    starts = text.line_starts()
    return text.text[starts[first - 1]:text.line_end(last - 1, True)]


def _replacements(body: list[ast.stmt], dev: str, root: str, text: _Text, dev_expr: str,
                  type_expr: str) -> Optional[list[tuple[int, int, str]]]:
    """(start, end, new text) of each device name of the template branch."""
    out: list[tuple[int, int, str]] = []
    skip: set[int] = set()
    parents: dict[int, ast.AST] = {}
    for stmt in body:
        for p in ast.walk(stmt):
            for c in ast.iter_child_nodes(p):
                parents[id(c)] = p
    for stmt in body:
        for node in ast.walk(stmt):
            if id(node) in skip:
                continue
            if isinstance(node, ast.Call) and _dotted(node.func) == [root, "device"] and \
                    len(node.args) == 1 and not node.keywords and \
                    isinstance(node.args[0], ast.Constant) and node.args[0].value == dev:
                skip.add(id(node.args[0]))
                s, e = text.span(node)
                parent = parents.get(id(node))
                loose = isinstance(parent, (ast.Assign, ast.AnnAssign, ast.Return, ast.keyword,
                                            ast.Call, ast.List, ast.Tuple, ast.Expr))
                if isinstance(parent, ast.Call) and parent.func is node:
                    loose = False
                out.append((s, e, dev_expr if loose else f"({dev_expr})"))
            elif isinstance(node, ast.JoinedStr):
                for v in node.values:
                    skip.add(id(v))
                head = node.values[0] if node.values else None
                if not (isinstance(head, ast.Constant) and isinstance(head.value, str) and
                        head.value.startswith(dev + ":")):
                    continue
                s, e = text.span(node)
                m = _QUOTE.match(text.text[s:e])
                if m is None or text.text[s + m.end():s + m.end() + len(dev) + 1] != dev + ":":
                    return None
                q = m.group(2)[0]
                inner = type_expr.replace('"', "'") if q == '"' else type_expr
                if q in inner:
                    return None
                at = s + m.end()
                out.append((at, at + len(dev), "{" + inner + "}"))
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                    node.value == dev and not isinstance(parents.get(id(node)), ast.JoinedStr):
                s, e = text.span(node)
                out.append((s, e, type_expr))
    out.sort()
    return out


def _render_rest(operands: list[ast.expr], root: str, text: _Text) -> str:
    """The other operands of the template's test, its device's count calls
    made the accelerator's, `and`-ed."""
    out = []
    for op in operands:
        s, e = text.span(op)
        reps = sorted(text.span(c) for c in _count_calls([op], root))
        src, pos = [], s
        for cs, ce in reps:
            src.append(text.text[pos:cs])
            src.append(f"{root}.accelerator.device_count()")
            pos = ce
        src.append(text.text[pos:e])
        piece = "".join(src)
        if isinstance(op, (ast.BoolOp, ast.IfExp, ast.Lambda, ast.NamedExpr)) or \
                "\n" in piece or "\r" in piece:
            piece = f"({piece})"
        out.append(piece)
    return " and ".join(out)


def _render(lad: _Ladder, text: _Text, target_version: tuple) -> Optional[str]:
    """The one statement (with its lines' breaks) the ladder becomes, or None."""
    root = lad.root
    tdev, cuda_body = _template(lad)
    first, last = cuda_body[0].lineno, cuda_body[-1].end_lineno
    block = _span_lines(text, first, last)
    base = text.text[text.line_starts()[lad.node.lineno - 1]:][:lad.node.col_offset]
    if base.strip():
        return None  # `x = 1; if ...`: not a statement of its own line
    want, n = _normal(cuda_body, tdev)
    cpu_else = bool(lad.orelse) and _normal(lad.orelse, "cpu")[0] == want
    rest = lad.rests.get(tdev, [])
    if cpu_else:
        if target_version < (2, 7) or rest:
            return None   # check_available is a parameter since 2.7; no place for `and`
        dev_expr = (f"{root}.accelerator.current_accelerator(check_available=True) or "
                    f'{root}.device("cpu")')
        type_expr = f"({dev_expr}).type"
    else:
        dev_expr = f"{root}.accelerator.current_accelerator()"
        type_expr = f"{dev_expr}.type"
    reps = _replacements(cuda_body, "cuda", root, text, dev_expr, type_expr) \
        if tdev == "cuda" else []
    if reps is None or len(reps) != n and n:
        return None
    start = text.line_starts()[first - 1]
    out, pos = [], start
    for s, e, new in reps:
        out.append(text.text[pos:s])
        out.append(new)
        pos = e
    out.append(text.text[pos:start + len(block)])
    body = "".join(out)
    if cpu_else:
        # the branch's statements, one level less indented (no string spans lines)
        body_indent = text.text[start:start + cuda_body[0].col_offset]
        if any(isinstance(x, ast.Constant) and isinstance(x.value, str) and
               x.lineno != x.end_lineno for s in cuda_body for x in ast.walk(s)):
            return None
        lines = split_lines(body)
        got = []
        for ln in lines:
            if ln.startswith(body_indent):
                got.append(base + ln[len(body_indent):])
            elif ln.strip() == "":
                got.append(ln)
            else:
                return None
        return "".join(got)
    cond = "" if not rest else " and " + _render_rest(rest, root, text)
    head = f"{base}if {root}.accelerator.is_available(){cond}:{text.newline}"
    if not lad.orelse:
        return head + body
    e_first = lad.orelse[0].lineno
    e_last = lad.orelse[-1].end_lineno
    return head + body + f"{base}else:{text.newline}" + _span_lines(text, e_first, e_last)


def collapse(data: bytes, path: str, findings: Sequence[_scan.Finding], target,
             keep: Sequence[str], frozen: Optional[dict],
             written: Optional[set[int]] = None, parsed: Optional[list] = None
             ) -> Optional[tuple[bytes, list[_scan.Finding], dict[int, _scan.Finding],
                                 list[_scan.Finding]]]:
    """The file with its collapsible ladders collapsed: (new bytes, the other
    findings moved onto them, id of a moved finding -> the original, the
    findings applied); None where no ladder was collapsed. A ladder without a
    finding is collapsed only where the fixer wrote one of its lines (``written``,
    1-based: the rounds' rewrites made it). ``parsed``: the (text, syntax
    tree) pairs of the file's parses so far, which the collapse reuses and
    adds its own to, for the fixer's later steps (Note [One parse a text])."""
    if data.count(b"is_available") < 2 or b"elif" not in data or \
            any(f.kind == "mock" for f in findings):
        return None
    text = _Text(data, "python")
    tree = parsed_tree(parsed, text.text)
    if tree is None:
        try:
            tree = ast.parse(text.text, filename=path)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        if parsed is not None:
            parsed.append((text.text, tree))
    roots = _torch_roots(tree)
    if not roots:
        return None
    from anydev._migrate import torch_versions as _versions  # noqa: PLC0415

    target = target or _versions.DEFAULT
    if target.version < (2, 6):
        return None   # torch.accelerator is 2.6's
    edits: list[tuple[int, int, str, list]] = []
    for lad in _ladders(tree, text.text, roots):
        if _why_not(lad, text, roots) is not None:
            continue
        if _rebound(tree, lad.node, lad.root):
            continue
        s = text.line_starts()[lad.node.lineno - 1]
        e = text.line_end(lad.node.end_lineno - 1, True)
        # the ladder's own line ends where the statement does (nothing after it)
        if text.text[text.span(lad.node)[1]:e].strip() not in ("",) and \
                not text.text[text.span(lad.node)[1]:e].strip().startswith("#"):
            continue
        mine = [f for f in findings
                if s <= text.index_of_byte(f.start) and text.index_of_byte(f.end) <= e]
        if not mine and not (written and any(
                ln in written for ln in range(lad.node.lineno, lad.node.end_lineno + 1))):
            continue
        # `keep` globs, mocks that cannot move, the project's markers; not the
        # rows' own versions: the collapse writes its own form, checked above
        newest = _versions.Target(_versions.NEWEST, target.source)
        todo, refused = _target_refusals(mine, newest, path, keep, frozen, data)
        if refused:
            continue
        src = text.text[s:e]
        cuda_body = _template(lad)[1]
        keep_lines = set(range(cuda_body[0].lineno, cuda_body[-1].end_lineno + 1))
        if lad.orelse:
            keep_lines |= set(range(lad.orelse[0].lineno, lad.orelse[-1].end_lineno + 1))
        comments = _comments(src)
        if any("noqa" in c or "anydev:" in c or "type: ignore" in c for _, c in comments):
            continue
        if any(line + lad.node.lineno - 1 not in keep_lines for line, _ in comments):
            continue  # a comment that the collapse would drop
        new = _render(lad, text, target.version)
        if new is None:
            continue
        edits.append((s, e, new, mine))
    if not edits:
        return None
    edits.sort(key=lambda x: x[0])
    out, pos = [], 0
    applied: list[_scan.Finding] = []
    for s, e, new, mine in edits:
        if s < pos:
            continue  # a ladder inside another's branch: the outer one's
        out.append(text.text[pos:s])
        out.append(new)
        pos = e
        applied += mine
    out.append(text.text[pos:])
    new_text = "".join(out)
    try:  # the collapsed text must parse; the fixer's check is of its own edits only
        new_tree = ast.parse(new_text, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    new_data = text.encode(new_text)
    done = {id(f) for f in applied}
    moved: list[_scan.Finding] = []
    back: dict[int, _scan.Finding] = {}
    for f in findings:
        if id(f) in done:
            continue
        g = _moved(f, text, edits, data)
        if g is None:
            return None  # a finding the collapse cannot move: nothing is collapsed
        moved.append(g)
        back[id(g)] = f
    if parsed is not None:
        parsed.append((new_text, new_tree))  # the text the fixer's first round reads
    return new_data, moved, back, applied


def parsed_tree(parsed: Optional[list], text: str) -> Optional[ast.Module]:
    """The syntax tree of ``text`` among ``parsed``'s (text, tree) pairs, or None."""
    for t, tree in reversed(parsed or ()):
        if t == text:
            return tree
    return None


def pre_pass(data: bytes, path: str, findings: Sequence[_scan.Finding], target,
             keep: Sequence[str], frozen: Optional[dict], language: Optional[str],
             parsed: Optional[list] = None):
    """(data, findings, restore) for the fixer's first round: the ladders
    collapsed (collapse) and the other findings moved onto the new text;
    ``restore(applied, skipped)`` gives the round's results in the original
    findings, the collapse's own applied included. ``parsed``: as collapse's."""
    got = collapse(data, path, findings, target, keep, frozen, parsed=parsed) \
        if language == "python" else None
    if got is None:
        return data, findings, lambda applied, skipped: (applied, skipped)
    new, moved, back, done = got

    def restore(applied, skipped):
        return (done + [back.get(id(f), f) for f in applied],
                [(back.get(id(f), f), why) for f, why in skipped])

    return new, moved, restore


def post_pass(original: bytes, current: bytes, path: str, target, keep: Sequence[str],
              frozen: Optional[dict], language: Optional[str], rules,
              parsed: Optional[list] = None
              ) -> tuple[bytes, list[_scan.Finding], list[tuple[_scan.Finding, str]]]:
    """(bytes, findings applied, findings left) after the fixer's rounds: the
    ladders the rounds' rewrites made collapsible (`torch.cuda.current_device()`
    and `torch.xpu.current_device()` in two branches, both made
    `torch.accelerator.current_device_index()`) collapsed in the same run, so
    that a second run has nothing to do (Note [Collapsing a dispatch ladder])."""
    if language != "python" or current == original or current.count(b"is_available") < 2 \
            or b"elif" not in current:
        return current, [], []
    found, _errors = _scan.scan_source(current, path, language="python")
    found = [f for f in found if f.kind != "mock"]
    if rules is not None:
        found = list(rules(found))
    before = set(original.splitlines())
    written = {i + 1 for i, ln in enumerate(current.splitlines()) if ln not in before}
    got = collapse(current, path, found, target, keep, frozen, written, parsed)
    if got is None:
        return current, [], []
    new, moved, _back, done = got
    return new, done, [(f, "") for f in moved]


def _moved(f: _scan.Finding, text: _Text, edits: list, data: bytes) -> Optional[_scan.Finding]:
    """``f`` at its place in the collapsed text (None: inside a collapsed ladder)."""
    db = dl = 0
    i = text.index_of_byte(f.start)
    for s, e, new, _ in edits:
        if e <= i:
            old_b = len(text.text[s:e].encode(text.encoding, errors="surrogateescape"))
            new_b = len(new.encode(text.encoding, errors="surrogateescape"))
            db += new_b - old_b
            dl += len(split_lines(new)) - len(split_lines(text.text[s:e]))
        elif s <= i:
            return None
    if not db and not dl:
        return f
    if type(f) is not _scan.Finding:
        return None  # (a subclass's own fields: the ladders are then left)
    return _scan.Finding(f.path, f.line + dl, f.column, f.end_line + dl, f.end_column, f.symbol,
                         f.replacement, f.rule, f.fix, f.message, f.kind, f.start + db,
                         f.end + db, None if f.call_end is None else f.call_end + db, f.text,
                         f.language)


def _rebound(tree: ast.Module, node: ast.AST, root: str) -> bool:
    """Whether the function around ``node`` binds the torch name itself."""
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        if not (fn.lineno <= node.lineno and node.end_lineno <= fn.end_lineno):
            continue
        a = fn.args
        if any(x.arg == root for x in [*a.posonlyargs, *a.args, *a.kwonlyargs,
                                       *([a.vararg] if a.vararg else []),
                                       *([a.kwarg] if a.kwarg else [])]):
            return True
        for n in ast.walk(fn):
            if isinstance(n, ast.Name) and n.id == root and isinstance(n.ctx, ast.Store):
                return True
            if isinstance(n, (ast.Import, ast.ImportFrom)) and \
                    any((x.asname or x.name.split(".")[0]) == root for x in n.names):
                return True
            if isinstance(n, (ast.Global, ast.Nonlocal)) and root in n.names:
                return True
    return False


# Note [Collapsing a dispatch ladder]
# `if torch.cuda.is_available(): T("cuda") elif torch.xpu.is_available():
# T("xpu") elif torch.backends.mps.is_available(): T("mps") else: T("cpu")`
# becomes `T((torch.accelerator.current_accelerator(check_available=True) or
# torch.device("cpu")).type)`, with `torch.device("cuda")` becoming the device
# itself. current_accelerator(check_available=True) is the accelerator torch
# was built for when it is available, else None (docs.pytorch.org/docs/2.7/
# generated/torch.accelerator.current_accelerator.html; the parameter exists
# since 2.7); at most one accelerator is built in (aten/src/ATen/accelerator/
# Accelerator.cpp raises "Cannot have both ..."). So on a CUDA machine both
# forms run T("cuda"), on an XPU or MPS machine T("xpu") or T("mps") (ROCm is
# "cuda" to both), on a machine with none T("cpu"); the one difference is the
# point of the migration: an accelerator the ladder did not name runs T with
# its own type instead of T("cpu"). That holds only when the branches are T
# with their device's name and nothing else: each branch's syntax tree, with
# its own device's name (the string, or the "cuda:" head of an f-string) set
# aside, must equal the CUDA branch's, and T must name no other device and
# use no device module (`torch.cuda.*`) or device method (`.cuda()`). A ladder
# without an `else` becomes `if torch.accelerator.is_available(): T(<type>)`,
# and one whose `else` is other code keeps it as the `else` (both valid from
# 2.6, where current_accelerator() raises without an accelerator: it is
# guarded). Comments of the CUDA branch and the `else` are kept; a ladder with
# a comment elsewhere, a noqa or anydev suppression comment, a finding that a
# `keep` glob, a patched mock or the project's own device marker refuses, or in
# a function that rebinds the name `torch` is left whole. The collapsed text
# must parse, else nothing is collapsed. A branch under the generic check
# (`elif torch.accelerator.is_available():`, written by a half migration or by
# --unsafe-fixes' rewrite of `torch.xpu.is_available()`) counts as a branch
# whose device has no name: `if A: X elif B: X` runs X where `A or B`, and a
# device's check A implies the accelerator's B, so `A or B` is B. Its code has
# no device name to set aside, so it matches only a CUDA branch that has none
# either (Megatron-LM's 27 duplicate dead `elif` branches; accelerate's
# `utils/bnb.py` changed again on a second run under --unsafe-fixes).
# A check `and`-ed with conditions that use no device but through the same
# device's count (`torch.cuda.is_available() and torch.cuda.device_count() >
# 1`, accelerate's launcher tests) is a branch too, where every branch has the
# same conditions with its own device's count: the ladder runs its code where
# its device is available with that many devices, which is the generic check
# `and`-ed with the accelerator's count (the count of the one accelerator
# built in). Conditions that differ between branches, or name another device,
# leave the ladder. The collapse runs before the first
# round and again after the last on what the rounds wrote (post_pass): a
# rewrite can make two branches the same (accelerate's `torch.cuda.
# current_device()` and `torch.xpu.current_device()`, both made
# `torch.accelerator.current_device_index()`), and a second run must find
# nothing to do.


# Note [One parse a text]
# A Python file's fix parsed the same text several times: the collapse parsed
# the file to look for ladders (any file with two `is_available` and an
# `elif`), then the first round parsed it again; after the rounds the collapse
# parsed the fixed text, then the wrap (Note [Wrapping rewritten lines] in
# wrap.py) parsed it again. Each parse of a file of a real tree costs about what
# the native scan of a hundred files does. So one fix of a file keeps the (text,
# tree) pair of each parse (engine._fix_rounds' ``parsed``), and a later step of
# the same text takes the tree (a text compared whole, never a stale tree): the
# collapse's first parse is the first round's where nothing was collapsed, its
# parse of the collapsed text is the first round's where a ladder was, and its
# parse after the rounds (or the last round's check) is the wrap's. No step
# changes a tree (the rewrites are edits of the text; the collapse compares
# copies). The collapse parses with the file's name, as the round does, so the
# SyntaxWarnings Python 3.12 gives name the file once.
