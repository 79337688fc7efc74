"""``anydev rule``: its parser and the command; the explanations themselves
are anydev._migrate.rules'. Loaded when the command runs."""

from __future__ import annotations

import sys

from anydev._common import config as _config
from anydev._migrate import rules as _rules

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    import argparse


def add_rule_parser(p: argparse.ArgumentParser) -> None:
    p.description = ("Explains a rule of the compat table: the legacy symbol, its spellings "
                     "and replacement, why, an example before and after, and the fix's safety.")
    p.add_argument("code", nargs="?", metavar="CODE")
    p.add_argument("--all", action="store_true", help="list every rule")
    p.add_argument("--output-format", "--format", dest="format",
                   choices=("text", "json", "markdown"), default="text",
                   help="markdown (with --all): docs/rules.md, a heading per rule")
    p.set_defaults(func=cmd_rule)


def cmd_rule(args: argparse.Namespace) -> int:
    import json

    from anydev._compat import table as _compat_table

    from anydev._migrate import meta_rules as _meta

    rows = _compat_table.ROWS
    if args.format == "markdown":
        if not args.all:
            print("anydev rule: --format markdown writes every rule: give --all",
                  file=sys.stderr)
            return 2
        sys.stdout.write(_rules.rules_markdown())
        return 0
    meta = _meta.ROWS_BY_CODE.get((args.code or "").strip().upper())
    if meta is not None and not args.all:
        if args.format == "json":
            print(json.dumps({"code": meta.code, "name": meta.name, "legacy": meta.legacy,
                              "kind": meta.kind, "status": meta.status, "fix": meta.fix,
                              "note": meta.note, "opt_in": meta.opt_in,
                              "example": {"before": [meta.example[0]],
                                          "after": [meta.example[1]]}}, indent=1))
        else:
            sys.stdout.write(_rules.explain_meta(meta))
        return 0
    if args.all:
        if args.format == "json":
            print(json.dumps([_rules.rule_doc(r) for r in rows], indent=1))
            return 0
        w = max(len(r.legacy) for r in rows)
        for r in _meta.ROWS_BY_CODE.values():
            print(f"{r.code}  {'opt-in':6}  {r.legacy:{w}}  -")
        for r in rows:
            status = r.fix if r.status != "kept" else "kept"
            print(f"{r.code}  {status:6}  {r.legacy:{w}}  {r.replacement or '-'}")
        return 0
    if not args.code:
        print("anydev rule: give a rule code (AD101) or --all", file=sys.stderr)
        return 2
    row = _compat_table.ROWS_BY_CODE.get(args.code.strip().upper())
    if row is None:
        hint = _config.did_you_mean(args.code.strip().upper(),
                                    [*_meta.ROWS_BY_CODE, *_compat_table.ROWS_BY_CODE])
        print(f"anydev rule: unknown rule code {args.code!r}{hint} (see `anydev rule --all`)",
              file=sys.stderr)
        return 2
    if args.format == "json":
        print(json.dumps(_rules.rule_doc(row, versions=True), indent=1))
        return 0
    sys.stdout.write(_rules.explain(row, versions=True))
    return 0
