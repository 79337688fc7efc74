"""The rules of the compat table explained: what ``anydev rule CODE`` prints
(the legacy symbol, its spellings and replacement, why, an example before and
after made from the row's signature and template, the torch release the fix
needs and what the differential proof showed), as text or as a JSON document.
The command line (anydev._cli.rule) and any other front end print these."""

from __future__ import annotations


def rule_url(code: str) -> str:
    """The page of a rule: its row of the migration guide (docs/migration-guide.md,
    whose rule column carries an anchor per code), for an editor's link and
    SARIF's helpUri."""
    from .output import INFORMATION_URI

    return f"{INFORMATION_URI}/blob/main/docs/migration-guide.md#{code.lower()}"


def rule_doc(row, *, versions: bool = False) -> dict:
    """The rule as ``anydev rule --format json`` prints it; ``versions``: with
    the release its fix needs and its proof (``since``, ``needs``, ``proof``)."""
    before, after = examples(row)
    doc = {"code": row.code, "legacy": row.legacy, "spellings": [row.legacy, *row.also],
            "kind": row.kind, "status": row.status, "replacement": row.replacement,
            "anydev": row.anydev, "fix": row.fix, "signature": row.signature,
            "template": row.template, "deprecated_in": row.deprecated_in, "note": row.note,
            "language": row.language, "source": row.source,
            "example": {"before": before, "after": after}}
    if versions:
        needs, proof = needs_and_proof(row)
        doc.update(since=row.since, needs=needs, proof=proof)
    return doc


_FIX_TEXT = {
    "safe": "safe: `anydev fix` rewrites it; the rewrite keeps the behaviour.",
    "unsafe": "unsafe: `anydev fix --unsafe-fixes` rewrites it; the rewrite changes behaviour "
              "as the note says, so review it.",
    "none": "none: no automatic rewrite; migrate by hand as the note says.",
}


def explain(row, *, versions: bool = False) -> str:
    """The rule as ``anydev rule CODE`` prints it; ``versions``: with its
    section "Versions and proof"."""
    text = _explain(row)
    return text + _versions_text(row) if versions else text


def _explain(row) -> str:
    import textwrap

    wrap = lambda s: textwrap.fill(s, 88, initial_indent="  ", subsequent_indent="  ")  # noqa: E731
    out = [f"{row.code}: {row.legacy}", ""]
    out.append(f"  legacy:         {row.legacy}  ({row.language}, {row.kind.replace('_', ' ')})")
    out.append(f"  spellings:      {', '.join([row.legacy, *row.also, *row.covers])}")
    if row.status == "kept":
        out.append(f"  status:         kept: device-specific (rule 4), never reported "
                   f"(checked against PyTorch {row.deprecated_in})")
    else:
        out.append(f"  replacement:    {row.replacement or '(none in PyTorch)'}")
        if row.anydev:
            out.append(f"  in anydev:      {row.anydev}")
        out.append(f"  deprecated in:  PyTorch {row.deprecated_in}")
        out.append(f"  fix:            {_FIX_TEXT[row.fix]}")
    out.append(f"  defined at:     {row.source}")
    out += ["", "Why", wrap(row.note)]
    before, after = examples(row)
    if row.status != "kept":
        out += ["", "Example"]
        for b, a in zip(before, after):
            out.append("  before:")
            out += ["    " + line for line in b.splitlines()]
            out.append("  after:" if row.fix != "none" else "  after (by hand):")
            out += ["    " + line for line in a.splitlines()]
    return "\n".join(out) + "\n"


def _split_top(s: str) -> list[str]:
    """Splits at top-level commas (outside brackets and quotes)."""
    out, depth, cur, quote_ch = [], 0, [], ""
    for ch in s:
        if quote_ch:
            cur.append(ch)
            if ch == quote_ch:
                quote_ch = ""
            continue
        if ch in "\"'":
            quote_ch = ch
        elif ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def _params(row) -> list[tuple[str, bool]]:
    """(name, required) of the legacy signature's named parameters."""
    sig = (row.signature or "").strip()
    if not sig.startswith("("):
        return []
    out = []
    for p in _split_top(sig[1:-1]):
        if not p or p in ("*", "/") or p.startswith("*"):
            continue
        has_default = "=" in p
        head = p.split("=", 1)[0].strip()
        if row.language == "cpp":
            import re

            m = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", head)
            if not m:
                continue
            name = m[-1]
        else:
            name = head.split(":", 1)[0].strip()
        out.append((name, not has_default))
    return out


def expand_template(template: str, args: list[str], bound: dict[str, str]) -> str:
    """Expands a row template (compat_map/SCHEMA.md) for a call whose
    arguments are `args` (source text, in order) and `bound` (parameter name
    -> source text): an argument item whose placeholders were not all
    supplied is dropped with its comma; {*} is every argument."""
    import re

    open_at = template.index("(")
    callee, inner = template[:open_at], template[open_at + 1:template.rindex(")")]
    items = []
    for item in _split_top(inner):
        if item == "{*}":
            items.extend(args)
            continue
        names = re.findall(r"\{([A-Za-z_][A-Za-z0-9_]*|\*)\}", item)
        if any(n != "*" and n not in bound for n in names):
            continue
        items.append(re.sub(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", lambda m: bound[m.group(1)], item)
                     .replace("{*}", ", ".join(args)))
    return f"{callee}({', '.join(items)})"


def examples(row) -> tuple[list[str], list[str]]:
    """Before/after examples for a row: a call with its required arguments,
    and, when the template adapts an optional one, a call passing it."""
    if row.status == "literal":
        from .literals import examples as literal_examples

        return literal_examples(row)
    params = _params(row)
    required = [n for n, req in params if req]
    optional = [n for n, req in params if not req]
    cases: list[tuple[list[str], dict]] = [([n for n in required], {n: n for n in required})]
    if row.template and optional:
        for n in optional:
            if "{" + n + "}" in row.template:
                bound = {m: m for m in required}
                bound[n] = n
                cases.append(([*required, f"{n}={n}"], bound))
                break
    before, after = [], []
    for args, bound in cases:
        b, a = _example(row, args, bound)
        before.append(b)
        after.append(a)
    return before, after


def _example(row, args: list[str], bound: dict) -> tuple[str, str]:
    cpp = row.language == "cpp"
    repl = row.replacement
    arg_text = ", ".join(args)
    if row.kind == "module":
        b = f"import {row.legacy}"
        a = f"import {repl}" if repl else "(no replacement)"
        return b, a
    if row.kind == "attribute":
        if row.legacy.endswith("Error"):
            return (f"except {row.legacy}:\n    ...",
                    f"except {repl}:\n    ..." if repl else "(no replacement)")
        return f"x = {row.legacy}", (f"x = {repl}" if repl else "(no replacement)")
    call_args = list(args)

    def new_call() -> str:
        if not repl:
            return "(no replacement)"
        if row.template:
            return expand_template(row.template, call_args, bound)
        return f"{repl}({arg_text})"

    if cpp:
        if row.kind == "class":
            var = "guard" if "Guard" in row.legacy else "x"
            return (f"{row.legacy} {var}({arg_text});",
                    f"{repl} {var}({arg_text});" if repl else "(no replacement)")
        return f"{row.legacy}({arg_text});", new_call() + ";" if repl else "(no replacement)"
    if row.kind == "context_manager":
        return f"with {row.legacy}({arg_text}):\n    ...", (
            f"with {new_call()}:\n    ..." if repl else "(no replacement)")
    if row.kind == "decorator":
        if args:
            return f"@{row.legacy}({arg_text})\ndef f(...): ...", f"@{new_call()}\ndef f(...): ..."
        bare = expand_template(row.template, [], {}) if row.template else repl
        return f"@{row.legacy}\ndef f(...): ...", f"@{bare}\ndef f(...): ..."
    if row.kind == "class":
        return f"x = {row.legacy}({arg_text})", f"x = {new_call()}"
    return f"{row.legacy}({arg_text})", new_call()


def needs_and_proof(row) -> tuple:
    """(what the rule's fix needs of torch, what the differential proof
    showed), each a sentence or None: the release the replacement needs
    (``since``) and the record of tools/prove_fixes.py in
    compat_map/proofs.json."""
    from anydev._compat import table as _compat_table

    proof = getattr(_compat_table, "PROOFS", {}).get(row.code)
    if row.status not in ("deprecated", "literal") or not row.replacement:
        needs = None
    elif row.since == "main":
        needs = (f"no PyTorch release up to {_compat_table.NEWEST_TORCH} has "
                 f"{row.replacement}: never applied")
    else:
        needs = f"needs torch >= {row.since}" if row.since else None
    if proof is None and row.status == "deprecated" and row.fix != "none":
        proof = ("not run: tools/prove_fixes.py runs Python rows only"
                 if row.language == "cpp" else "not run: no record in compat_map/proofs.json")
    return needs, proof


def _versions_text(row) -> str:
    import textwrap

    if row.status not in ("deprecated", "literal"):
        return ""
    needs, proof = needs_and_proof(row)
    lines = ["", "Versions and proof"]
    if needs:
        lines.append(f"  since:          {needs}")
    lines.append(f"  fix level:      {row.fix}"
                 + ("  (why: the note above, and what the proof shows)"
                    if row.fix == "unsafe" else ""))
    if proof:
        lines.append(textwrap.fill(f"proven:         {proof}" if proof.startswith("same")
                                   else f"proof:          {proof}", 88,
                                   initial_indent="  ", subsequent_indent=" " * 18))
    if row.status == "literal":
        lines.append(textwrap.fill(
            "fixed as:       a unit: with the other device literals, idioms and "
            "availability checks of its function, or not at all (a finding the fixer "
            "cannot rewrite leaves its whole function; docs/scan.md)"
            if row.language == "python" else
            "fixed as:       not rewritten: C++ literals are hints", 88,
            initial_indent="  ", subsequent_indent=" " * 18))
    return "\n".join(lines) + "\n"


def explain_meta(row) -> str:
    """``anydev rule CODE`` for a rule of anydev's own (anydev._migrate.meta_rules)."""
    import textwrap

    wrap = lambda t: textwrap.fill(t, 88, initial_indent="  ", subsequent_indent="  ")  # noqa: E731
    before, after = row.example
    out = [f"{row.code}: {row.legacy} ({row.name})", "",
           "  kind:           anydev's own rule, about a suppression (not a table row)",
           f"  opt-in:         --extend-select {row.code}, or extend-select = [\"{row.code}\"]",
           "  fix:            none: remove the unused codes by hand",
           f"  defined at:     {row.source}", "", "Why", wrap(row.note), "", "Example",
           "  before:", *("    " + line for line in before.splitlines()),
           "  after:", *("    " + line for line in after.splitlines())]
    return "\n".join(out) + "\n"


def rules_markdown() -> str:
    """docs/rules.md: every rule anydev reports (anydev's own, then the
    table's deprecated and literal rows; not the kept ones, which it never
    reports), a heading each (its anchor is the code in lower case: what
    SARIF's helpUri and the JSON report's ``url`` link to), with what
    ``anydev rule CODE`` prints. `anydev rule --all --format markdown` writes
    it; tests/python/scan/test_scan_formats.py checks the file is this."""
    from anydev._compat import table as _table
    from . import meta_rules as _meta

    out = ["# anydev's rules", "",
           "<!-- generated by `anydev rule --all --format markdown`; "
           "tests/python/scan/test_scan_formats.py checks it -->", "",
           "Every rule `anydev scan` reports, as `anydev rule CODE` explains it: anydev's own "
           "rules (AD0xx), then the compat table's (`compat_map/`: AD1xx-AD8xx legacy entry "
           "points, AD9xx device literals and idioms). The table's `kept` rows, which PyTorch "
           "keeps device-specific, are never reported and are not listed. "
           "The anchors are the codes (`rules.md#ad107`).", ""]
    for row in _meta.ROWS_BY_CODE.values():
        out += [f"## {row.code}", "", f"{row.legacy} (`{row.name}`)", "", "```text",
                explain_meta(row).rstrip("\n"), "```", ""]
    for row in _table.ROWS:
        if row.status == "kept":
            continue
        repl = f"`{row.replacement}`" if row.replacement else "no drop-in replacement"
        out += [f"## {row.code}", "", f"`{row.legacy}` → {repl} (fix: {row.fix})", "",
                "```text", explain(row, versions=True).rstrip("\n"), "```", ""]
    return "\n".join(out).rstrip("\n") + "\n"
