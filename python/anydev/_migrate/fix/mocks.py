"""Mock targets (``mock.patch("torch.cuda.set_device")``) moved with the
calls they patch, decided over the whole fixed tree (Note [Mock targets])."""

from __future__ import annotations

import re
from typing import Optional

from anydev import scan as _scan
from .edits import _Edit, _Edits
from .rows import _row_of
from .text import _Text


# Note [Mock targets]
# A test that patches `mock.patch("torch.cuda.set_device")` intercepts the code it
# tests only while that code calls torch.cuda.set_device. Once the fixer rewrites
# the call, the patch must name the replacement, or the test silently stops
# intercepting it. So the decision is taken over the whole fixed tree: a mock
# target of a symbol moves to the replacement when at least one call of the
# symbol was rewritten and none was left; otherwise it stays, with the reason.


def _movable(f: _scan.Finding) -> bool:
    """Whether the fixer can rewrite a mock target of this form (a dotted
    name in a string, or `module, "name"`) to its row's replacement."""
    row = _row_of(f)
    if row is None or not row.replacement or row.fix == "none" or "(" in row.replacement:
        return False
    text = f.text.strip()
    return bool(_MOCK_STRING.match(text) or (_MOCK_OBJECT.match(text) and "." in row.replacement))


def mock_conflicts(pending: list, frozen: dict[str, str]) -> dict[str, str]:
    """The symbols whose calls must be left (symbol -> why) because a test
    patches them and the patch cannot move with them: some calls of the
    symbol in the fixed tree were rewritten and others left, or the patch's
    form cannot be rewritten (Note [Mock targets]). ``frozen``: those decided
    before (not repeated)."""
    done: dict[str, int] = {}
    left: dict[str, int] = {}
    mocks: dict[str, list] = {}
    for item in pending:
        fr = item[0]
        for f in fr.applied:
            if f.kind not in ("import", "mock"):
                done[f.symbol] = done.get(f.symbol, 0) + 1
        for f, why in fr.skipped:
            if f.kind == "mock":
                mocks.setdefault(f.symbol, []).append((fr.path, f))
            elif f.kind != "import":
                left[f.symbol] = left.get(f.symbol, 0) + 1
    out: dict[str, str] = {}
    for symbol, where in mocks.items():
        if symbol in frozen or not done.get(symbol):
            continue
        path, f = where[0]
        stuck = [(p, m) for p, m in where if not _movable(m)]
        if stuck:
            p, m = stuck[0]
            out[symbol] = (f"a test patches {symbol} ({p}:{m.line}) in a form the fixer cannot "
                           "move; the patched call and its patch move together or not at all")
        elif left.get(symbol):
            out[symbol] = (f"a test patches {symbol} ({path}:{f.line}), and {left[symbol]} "
                           f"other use(s) of it in the fixed tree are left; the patch cannot "
                           "follow only some of them, so the patched calls and the patch stay "
                           "together")
    return out


def _move_mock_targets(pending: list) -> None:
    rewritten: dict[str, int] = {}
    left: dict[str, int] = {}
    mocks = []
    for item in pending:
        fr = item[0]
        for f in fr.applied:
            if f.kind != "import":
                rewritten[f.symbol] = rewritten.get(f.symbol, 0) + 1
        for f, why in fr.skipped:
            if f.kind == "mock":
                mocks.append((item, f))
            elif f.kind != "import":
                left[f.symbol] = left.get(f.symbol, 0) + 1
    plans: dict[int, dict[int, Optional[str]]] = {}
    reasons: dict[tuple[int, int], str] = {}
    for item, f in mocks:
        row = _row_of(f)
        n_done, n_left = rewritten.get(f.symbol, 0), left.get(f.symbol, 0)
        why = None
        if row is None or not row.replacement or row.fix == "none":
            why = f"{f.symbol} has no replacement to patch instead"
        elif n_done == 0 and n_left == 0:
            why = (f"no call of {f.symbol} is in the fixed tree: the code this patches is "
                   "elsewhere; move the target with it by hand")
        elif n_left and not n_done:
            why = (f"kept: the {n_left} call(s) of {f.symbol} in the fixed tree were not "
                   "rewritten, so the patch still intercepts them")
        elif n_left:
            why = (f"{n_left} call(s) of {f.symbol} in the fixed tree were not rewritten, "
                   f"{n_done} were: the patch must keep intercepting both; rewrite by hand")
        if why is None:
            plans.setdefault(id(item), {})[f.start] = row.replacement
        else:
            reasons[(id(item), f.start)] = why
    for k, item in enumerate(pending):
        fr, data, new, st, findings, target = item
        mine = [(f, why) for f, why in fr.skipped if f.kind == "mock"]
        if not mine:
            continue
        plan = plans.get(id(item), {})
        if plan:
            try:
                new2, applied = _rewrite_mocks(new, fr.path, plan,
                                               sorted(f.start for f, _ in mine))
            except ValueError as e:
                plan, new2, applied = {}, new, []
                for f, _ in mine:
                    reasons[(id(item), f.start)] = str(e)
            pending[k] = (fr, data, new2, st, findings, target)
            done = {f.start for f, _ in mine if f.start in applied}
            fr.applied += [f for f, _ in mine if f.start in done]
            fr.applied.sort(key=lambda f: f.start)
        else:
            done = set()
        fr.skipped = [(f, why) for f, why in fr.skipped if f.kind != "mock"] + [
            (f, reasons.get((id(item), f.start), "could not rewrite the mock target"))
            for f, _ in mine if f.start not in done]
        fr.skipped.sort(key=lambda s: s[0].start)


_MOCK_STRING = re.compile(r"""^(?P<q>[rRuU]?(?:'|"))(?P<name>[\w.]+)(?P=q)$""")
_MOCK_OBJECT = re.compile(r"""^(?P<mod>[\w.]+)(?P<sep>\s*,\s*)(?P<q>['"])(?P<attr>\w+)(?P=q)$""")


def _rewrite_mocks(data: bytes, path: str, plan: dict[int, str], every: list[int]
                   ) -> tuple[bytes, set[int]]:
    """Rewrites the mock targets at the byte offsets of ``plan`` (offset of the
    finding in the *original* file -> replacement); ``every``: the offsets of
    all the file's original mock targets, in order. The file was already
    fixed for its other findings, so the mocks are found again by a fresh
    scan of the fixed bytes: the k-th mock there is the k-th of ``every``
    (each planned one lands on its own target, not on the k-th planned)."""
    findings, _ = _scan.scan_source(data, path)
    mocks = sorted((f for f in findings if f.kind == "mock"), key=lambda f: f.start)
    if len(mocks) != len(every):
        raise ValueError("could not find the mock targets again after the rewrite")
    text = _Text(data, "python")
    edits = _Edits(text.text)
    applied: set[int] = set()
    for orig, f in zip(every, mocks):
        rep = plan.get(orig)
        if rep is None:
            continue
        s, e = text.index_of_byte(f.start), text.index_of_byte(f.end)
        src = text.text[s:e]
        m = _MOCK_STRING.match(src)
        if m:
            new = f"{m.group('q')}{rep}{m.group('q')[-1]}"
        else:
            m2 = _MOCK_OBJECT.match(src)
            if not m2 or "." not in rep:
                continue
            mod, attr = rep.rsplit(".", 1)
            root = m2.group("mod").split(".")[0]
            mod = root + mod[len("torch"):] if mod.startswith("torch") else mod
            new = f"{mod}{m2.group('sep')}{m2.group('q')}{attr}{m2.group('q')}"
        edits.add([_Edit(s, e, new)])
        applied.add(orig)
    return text.encode(edits.apply()), applied
