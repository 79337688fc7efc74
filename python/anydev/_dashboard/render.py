"""The page: one HTML file with its CSS, SVG and JavaScript inline.

    html = render.page(dashboard)          # a str; write it as UTF-8

Note [Self-contained page]: the page must open from disk, from a CI
artefact and with no network, so it loads nothing: no fonts, images,
scripts or styles from elsewhere. Its Content-Security-Policy says so to the
browser (``default-src 'none'``), and its one script runs only by the hash of
its text (``script-src 'sha256-...'``), so nothing but that script can run in
it, whatever a file name or a reason shown in the page holds.

Note [Readable without JavaScript]: everything is written into the page as
HTML and SVG; the script (page.js) only adds the panel beside the map and
the sorting of tables. The map's three views are radio buttons and CSS; a
tile links to its file's list (a ``<details>`` further down). With scripts
off, the page reads as tables. tests/python/dashboard/test_browser.py renders
it both ways in Chromium.

Note [Large reports]: the per-file lists sit in closed ``<details>`` (a
browser does not lay out what a closed one holds), the sites found only by
the scanner likewise, and the page is built as a list of strings joined
once; 10,000 findings render in well under the 2 s the page must take
(test_browser.py measures it).
"""

from __future__ import annotations

import base64
import datetime as _dt
import hashlib
import math
import os
from collections import Counter, defaultdict
from html import escape
from typing import Any, Optional

from anydev._compat.table import ROWS_BY_CODE
from anydev._migrate.literals import module_of

from . import treemap as _treemap
from .model import Dashboard, Item
from .stats import release_key

__all__ = ["page"]

_HERE = os.path.dirname(os.path.abspath(__file__))
MAP_W, MAP_H = 960, 560
#: The smallest tile drawn, in square pixels of the map (Note [Large reports]).
MIN_TILE = 24.0
#: The most files drawn in one view of the map.
MAX_TILES = 1500
#: The most sites that ran listed open; the rest are in a closed list below them.
OPEN_SITES = 250
#: The most sites that never ran listed one by one (more are marked in the files' lists).
LISTED_STATIC_SITES = 2000
CHART_W, CHART_H = 960, 320

VERDICT_TEXT = {"safe": "anydev fix", "unsafe": "--unsafe-fixes", "refused": "refused",
                "manual": "by hand"}
CATEGORY_ONE = {"api": "API reference", "literal": "device literal", "idiom": "idiom"}
SHORT = {"api": "API", "literal": "literal", "idiom": "idiom"}
SERIES = (("api", "API references"), ("literal", "device literals"), ("idiom", "idioms"),
          ("total", "all findings"))


def _asset(name: str) -> str:
    with open(os.path.join(_HERE, name), encoding="utf-8") as f:
        return f.read()


def _e(s: Any) -> str:
    return escape(str(s), quote=True)


def _n(n: int) -> str:
    return f"{n:,}"


def _plural(n: int, one: str, many: Optional[str] = None) -> str:
    return f"{_n(n)} {one if n == 1 else (many or one + 's')}"


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "0%"


def page(d: Dashboard) -> str:
    """The page of ``d`` (Note [Self-contained page])."""
    files = _files(d.items)
    index = {path: i for i, path in enumerate(files)}
    body: list[str] = []
    body += _header(d)
    body.append("<main>")
    body += _where(d, files, index)
    body += _cost(d)
    body += _runs(d, index)
    body += _progress(d)
    body += _file_lists(d, files)
    if d.errors:
        body += _errors(d)
    body.append("</main>")
    body.append(f'<footer>Made by <code>anydev report html</code> (anydev {_e(d.version)}) on '
                f'{_e(d.generated)} from <code>{_e(" ".join(d.paths))}</code> in '
                f'<code>{_e(d.root)}</code>. Self-contained: it loads nothing from elsewhere. '
                f'Rules: <code>anydev rule CODE</code>.</footer>')
    script = _asset("page.js")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode()
    csp = (f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
           f"script-src 'sha256-{digest}'")
    head = ('<!DOCTYPE html>\n<html lang="en" class="nojs">\n<head>\n<meta charset="utf-8">\n'
            f'<meta http-equiv="Content-Security-Policy" content="{csp}">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f'<meta name="generator" content="anydev {_e(d.version)}">\n'
            f"<title>{_e(d.title)}</title>\n<style>\n{_asset('page.css')}</style>\n</head>\n"
            "<body>\n")
    return head + "\n".join(body) + f"\n<script>{script}</script>\n</body>\n</html>\n"


def _files(items: list[Item]) -> dict[str, list[Item]]:
    """The items by file, in path order (the scan's order)."""
    out: dict[str, list[Item]] = {}
    for i in items:
        got = out.get(i.path)
        if got is None:
            got = out[i.path] = []
        got.append(i)
    return out


# --- the head ------------------------------------------------------------------------


def _header(d: Dashboard) -> list[str]:
    t = d.stats.total
    v = d.verdicts
    out = ["<header>", f"<h1>{_e(d.title)}</h1>",
           f'<p class="muted">{_plural(t.total, "legacy finding")} in '
           f'{_plural(d.stats.files, "file")} ({_n(d.stats.files_scanned)} scanned): '
           f'<span class="c-api">{_plural(t.api, "API reference")}</span>, '
           f'<span class="c-literal">{_plural(t.literal, "device literal")}</span>, '
           f'<span class="c-idiom">{_plural(t.idiom, "idiom")}</span>. '
           f'Scanned <code>{_e(" ".join(d.paths))}</code>; generated {_e(d.generated)}.</p>',
           '<div class="totals">']
    for verdict, what in (("safe", "<code>anydev fix</code> rewrites"),
                          ("unsafe", "<code>--unsafe-fixes</code> rewrites"),
                          ("refused", "the fixer refuses"), ("manual", "need a human")):
        out.append(f'<div class="card {verdict}" data-verdict="{verdict}"><b>{_n(v[verdict])}</b>'
                   f"{what}</div>")
    if d.baseline is not None:
        out.append(f'<div class="card"><b>{_n(d.baseline.accepted)}</b>the baseline accepts</div>')
    if d.runtime is not None:
        out.append(f'<div class="card"><b>{_n(d.runtime.calls)}</b>legacy calls ran</div>')
    out.append("</div>")
    out.append('<nav><a href="#where">Where the legacy code is</a>'
               '<a href="#cost">What the next step costs</a>'
               '<a href="#runs">What really runs</a><a href="#progress">Progress over time</a>'
               '<a href="#files">Every finding</a></nav>')
    out.append("</header>")
    return out


# --- where the legacy code is ------------------------------------------------------------


def _where(d: Dashboard, files: dict[str, list[Item]], index: dict[str, int]) -> list[str]:
    out = ['<section id="where">', "<h2>Where the legacy code is</h2>"]
    if not d.items:
        out.append("<p>No legacy finding: nothing to migrate in these paths.</p></section>")
        return out
    out.append('<p class="muted">Each tile is a file, sized by its findings and grouped in '
               "its folders. A click lists the file's findings"
               '<span class="nojs-only"> (further down the page)</span>: line, rule, fix level '
               "and why a fix was refused.</p>")
    out.append('<div class="views">')
    views = (("all", "All findings", ("api", "literal", "idiom")),
             ("api", "API references", ("api",)),
             ("lit", "Device literals and idioms", ("literal", "idiom")))
    for key, label, _ in views:
        out.append(f'<input type="radio" name="view" id="view-{key}"'
                   f'{" checked" if key == "all" else ""}><label for="view-{key}">'
                   f"{label}</label>")
    out.append('<div class="maprow"><div class="maps">')
    for key, label, cats in views:
        out.append(f'<div class="map map-{key}">')
        out.append(_treemap_svg(files, index, cats, label))
        out.append("</div>")
    out.append('<p class="muted"><span class="swatch s-api"></span>API references'
               '<span class="swatch s-literal"></span>device literals'
               '<span class="swatch s-idiom"></span>idioms'
               '<span class="swatch s-fold"></span>folder. A darker tile has more findings.</p>')
    out.append('</div><aside class="panel" id="panel" aria-live="polite">'
               '<p class="muted">Click a tile to list its findings here.</p></aside></div>')
    out.append("</div>")
    out += _module_table(d)
    out.append("</section>")
    return out


def _treemap_svg(files: dict[str, list[Item]], index: dict[str, int], cats: tuple,
                 label: str) -> str:
    counts: dict[str, Counter] = {}
    for path, items in files.items():
        c = Counter(i.category for i in items if i.category in cats)
        if c:
            counts[path] = c
    if not counts:
        return (f'<p class="muted">No {label.lower()}.</p>')
    sizes = {p.replace(os.sep, "/"): float(sum(c.values())) for p, c in counts.items()}
    by_slash = {p.replace(os.sep, "/"): p for p in counts}
    root = _treemap.tree(sizes, {p.replace(os.sep, "/"): index[p] for p in counts})
    tiles = _treemap.layout(root, MAP_W, MAP_H)
    # Note [Large reports]: at most MAX_TILES files are drawn, the largest;
    # the others are too small to see or click at this size.
    leaves = sorted((t for t in tiles if t.node.leaf and t.w * t.h >= MIN_TILE),
                    key=lambda t: -t.w * t.h)
    drawn = {id(t) for t in leaves[:MAX_TILES]}
    top = max(sizes.values())
    log_top = math.log1p(top)
    out = [f'<svg class="treemap" viewBox="0 0 {MAP_W} {MAP_H}" role="img" '
           f'aria-label="{_e(label)} by folder and file">']
    for t in tiles:
        n = t.node
        x, y, w, h = round(t.x), round(t.y), round(t.x + t.w) - round(t.x), \
            round(t.y + t.h) - round(t.y)
        if w <= 0 or h <= 0:
            continue
        if not n.leaf:
            out.append(f'<g class="folder" data-path="{_e(n.path)}"><rect class="fold" x="{x}" '
                       f'y="{y}" width="{w}" height="{h}"><title>{_e(n.path)}/: '
                       f'{_plural(int(n.size), "finding")}</title></rect>')
            if t.header:
                out.append(f'<text class="flabel" x="{x + 4}" y="{y + 11.5}">'
                           f"{_e(_fit(n.name + '/ ' + _n(int(n.size)), w - 8))}</text>")
            out.append("</g>")
            continue
        if id(t) not in drawn:
            continue  # too small to see or click: its folder's tile and the lists show it
        path = by_slash[n.path]
        c = counts[path]
        total = sum(c.values())
        opacity = 0.45 + 0.55 * (math.log1p(total) / log_top if log_top else 1.0)
        detail = ", ".join(f"{_n(c[k])} {SHORT[k]}" for k in cats if c[k])
        named = f' data-path="{_e(path)}"' if len(cats) == 3 else ""
        out.append(f'<a href="#file-{n.index}" data-file="{n.index}"{named} '
                   f'data-count="{total}"><title>{_e(path)}: {_n(total)} ({detail})</title>')
        # One band per kind of finding, along the tile's longer side.
        at = 0.0
        for k in cats:
            if not c[k]:
                continue
            share = c[k] / total
            if w >= h:
                a, b = round(x + at), round(x + at + w * share)
                out.append(f'<rect x="{a}" y="{y}" width="{b - a}" height="{h}" '
                           f'fill-opacity="{opacity:.2f}" class="t k-{k}"/>')
                at += w * share
            else:
                a, b = round(y + at), round(y + at + h * share)
                out.append(f'<rect x="{x}" y="{a}" width="{w}" height="{b - a}" '
                           f'fill-opacity="{opacity:.2f}" class="t k-{k}"/>')
                at += h * share
        if w >= 28 and h >= 16:
            name = _fit(n.name, w - 6)
            if name:
                out.append(f'<text class="name" x="{x + 3}" y="{y + 12}">{_e(name)}</text>')
            if h >= 30:
                out.append(f'<text class="n" x="{x + 3}" y="{y + 25}">{_n(total)}</text>')
        out.append("</a>")
    out.append("</svg>")
    return "".join(out)


def _fit(text: str, width: float, char: float = 6.4) -> str:
    """``text`` cut to about ``width`` pixels of 11 px text ('' if not even 3 characters fit)."""
    most = int(width // char)
    if most < 3:
        return ""
    return text if len(text) <= most else text[:most - 1] + "…"


def _module_table(d: Dashboard) -> list[str]:
    accepted = d.baseline.by_module if d.baseline is not None else None
    per_module: dict[str, Counter] = defaultdict(Counter)
    files_of: dict[str, set] = defaultdict(set)
    for i in d.items:
        m = module_of(i.path)
        per_module[m][i.verdict] += 1
        files_of[m].add(i.path)
    out = ["<h3>By module</h3>",
           '<table class="sortable" id="modules"><thead><tr><th>module (folder)</th>'
           '<th class="n">files</th><th class="n">API</th><th class="n">literals</th>'
           '<th class="n">idioms</th><th class="n">total</th><th class="n">anydev fix</th>'
           '<th class="n">--unsafe-fixes</th><th class="n">refused</th><th class="n">by hand</th>'
           + ('<th class="n">accepted</th>' if accepted is not None else "")
           + "</tr></thead><tbody>"]
    for m, c in sorted(d.stats.by_module.items(), key=lambda kv: (-kv[1].total, kv[0])):
        v = per_module[m]
        out.append(f'<tr data-module="{_e(m)}"><td class="mono">{_e(m)}</td>'
                   f'<td class="n">{len(files_of[m])}</td><td class="n">{_n(c.api)}</td>'
                   f'<td class="n">{_n(c.literal)}</td><td class="n">{_n(c.idiom)}</td>'
                   f'<td class="n total">{_n(c.total)}</td><td class="n">{_n(v["safe"])}</td>'
                   f'<td class="n">{_n(v["unsafe"])}</td><td class="n">{_n(v["refused"])}</td>'
                   f'<td class="n">{_n(v["manual"])}</td>'
                   + (f'<td class="n">{_n(accepted.get(m, 0))}</td>' if accepted is not None
                      else "") + "</tr>")
    out.append("</tbody></table>")
    return out


# --- what the next step costs ------------------------------------------------------------


def _cost(d: Dashboard) -> list[str]:
    st = d.stats
    v = d.verdicts
    total = len(d.items)
    out = ['<section id="cost">', "<h2>What the next step costs</h2>"]
    if not total:
        out.append("<p>Nothing: no finding left.</p></section>")
        return out
    who = ("the fixer's verdict on each finding (<code>anydev fix --diff --unsafe-fixes</code>, "
           "nothing written)" if d.fixer else "each rule's fix level (the fixer was not run)")
    out.append(f'<p class="muted">By {who}, at the floor torch {_e(st.target)} '
               f"({_e(st.target_source)}).</p>")
    out.append(_verdict_bar(v, total))
    out.append('<table id="verdicts"><thead><tr><th>next step</th><th class="n">findings</th>'
               '<th class="n">share</th></tr></thead><tbody>')
    for verdict, what in (("safe", "<code>anydev fix</code> rewrites them"),
                          ("unsafe", "<code>anydev fix --unsafe-fixes</code> rewrites them; "
                                     "their rules say how behaviour changes"),
                          ("refused", "the rule has a fix, the fixer refuses it here "
                                      "(reasons below)"),
                          ("manual", "no automatic fix: a human rewrites them")):
        out.append(f'<tr data-verdict="{verdict}"><td><span class="v v-{verdict}">'
                   f"{VERDICT_TEXT[verdict]}</span> {what}</td>"
                   f'<td class="n">{_n(v[verdict])}</td><td class="n">{_pct(v[verdict], total)}'
                   "</td></tr>")
    out.append("</tbody></table>")
    out += _releases(d)
    out += _human(d)
    out += _baseline(d)
    out.append("</section>")
    return out


def _verdict_bar(v: Counter, total: int) -> str:
    w, h = 960, 26
    out = [f'<svg class="bar" viewBox="0 0 {w} {h}" role="img" aria-label="findings by next step">']
    x = 0.0
    for verdict in ("safe", "unsafe", "refused", "manual"):
        if not v[verdict]:
            continue
        bw = w * v[verdict] / total
        out.append(f'<rect x="{x:.1f}" y="0" width="{bw:.1f}" height="{h}" '
                   f'class="k-{verdict}"><title>{VERDICT_TEXT[verdict]}: '
                   f"{_n(v[verdict])}</title></rect>")
        if bw > 60:
            out.append(f'<text x="{x + 6:.1f}" y="17" font-size="12" '
                       f'fill="{"#222" if verdict == "unsafe" else "#fff"}">'
                       f"{VERDICT_TEXT[verdict]} {_n(v[verdict])}</text>")
        x += bw
    out.append("</svg>")
    return "".join(out)


def _releases(d: Dashboard) -> list[str]:
    st = d.stats
    out = ["<h3>By the torch release that unlocks them</h3>"]
    if not st.by_release:
        out.append("<p>No finding has a fix that a torch release brings.</p>")
        return out
    best = next((u for u in st.unlocks if u.more_safe), None) or \
        next((u for u in st.unlocks if u.more_unsafe), None)
    if best is not None:
        extra = (f" (and {_plural(best.more_unsafe, 'more unsafe fix', 'more unsafe fixes')} "
                 "with <code>--unsafe-fixes</code>)" if best.more_unsafe else "")
        out.append(f'<p class="headline" id="unlock">Raising the floor to torch '
                   f"{_e(best.torch)} makes {_plural(best.more_safe, 'more fix', 'more fixes')} "
                   f"safe{extra}.</p>")
    else:
        out.append(f'<p class="headline" id="unlock">At the floor torch {_e(st.target)} every '
                   "fix the table has is allowed: raising it unlocks nothing more.</p>")
    out.append('<table id="releases"><thead><tr><th>torch</th><th class="n">safe fixes</th>'
               '<th class="n">unsafe fixes</th><th class="n">fixable at this floor</th>'
               "<th>compared with the floor now</th></tr></thead><tbody>")
    cum = 0
    floor = release_key(st.target)
    for release in sorted(st.by_release, key=release_key):
        c = st.by_release[release]
        if release == "main":
            out.append(f'<tr data-torch="main"><td>no release yet</td><td class="n">{_n(c.safe)}'
                       f'</td><td class="n">{_n(c.unsafe)}</td><td class="n">—</td>'
                       "<td>their replacement is in no released torch</td></tr>")
            continue
        cum += c.safe + c.unsafe
        if release_key(release) <= floor:
            note = "allowed now"
        else:
            u = st.unlock(release)
            note = (f"+{_n(u.more_safe)} safe, +{_n(u.more_unsafe)} unsafe" if u else "")
        out.append(f'<tr data-torch="{_e(release)}"><td>{_e(release)}</td>'
                   f'<td class="n">{_n(c.safe)}</td><td class="n">{_n(c.unsafe)}</td>'
                   f'<td class="n">{_n(cum)}</td><td>{note}</td></tr>')
    out.append("</tbody></table>")
    out.append('<p class="muted">A release counts the findings whose replacement it first has '
               "(each rule's <code>since</code>); the fixer may still refuse one for a reason of "
               "its own code.</p>")
    return out


def _human(d: Dashboard) -> list[str]:
    out = ["<h3>What only a human can do</h3>"]
    manual: dict[str, list[Item]] = defaultdict(list)
    for i in d.items:
        if i.verdict == "manual":
            manual[i.rule].append(i)
    if not manual and not d.reasons:
        out.append("<p>Nothing: every finding has a fix the fixer applies.</p>")
        return out
    if manual:
        out.append('<p>Rules without an automatic fix:</p><table class="sortable" id="manual">'
                   '<thead><tr><th>rule</th><th>legacy</th><th class="n">findings</th>'
                   "<th>what to do</th></tr></thead><tbody>")
        for code, items in sorted(manual.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            row = ROWS_BY_CODE.get(code)
            note = row.note if row is not None else ""
            out.append(f'<tr data-rule="{_e(code)}"><td class="mono">{_e(code)}</td>'
                       f'<td class="sym">{_e(row.legacy if row else items[0].symbol)}</td>'
                       f'<td class="n">{_n(len(items))}</td><td class="why">{_e(note)}</td></tr>')
        out.append("</tbody></table>")
    if d.reasons:
        out.append('<p>Fixes the fixer refuses, by reason (each finding\'s own reason is in its '
                   'file\'s list):</p><table class="sortable" id="reasons"><thead><tr>'
                   '<th class="n">findings</th><th>reason</th></tr></thead><tbody>')
        for kind, n, example in d.reasons:
            out.append(f'<tr><td class="n">{_n(n)}</td><td class="why">{_e(example)}</td></tr>')
        out.append("</tbody></table>")
    return out


def _baseline(d: Dashboard) -> list[str]:
    out = ["<h3>What the baseline accepts</h3>"]
    b = d.baseline
    if b is None:
        out.append('<p class="muted">No baseline given (<code>--baseline FILE</code>, or '
                   "<code>baseline</code> in <code>[tool.anydev]</code>).</p>")
        return out
    out.append(f'<p id="baseline">The baseline <code>{_e(b.path)}</code> accepts '
               f"{_plural(b.accepted, 'finding')}; {_plural(b.new, 'finding is', 'findings are')}"
               " new (what <code>anydev scan --baseline</code> fails on); "
               f"{_plural(b.gone, 'entry', 'entries')} of it no longer "
               f"match{'es' if b.gone == 1 else ''} a finding (fixed since: "
               "<code>--write-baseline</code> drops them).</p>")
    return out


# --- what really runs ------------------------------------------------------------------------


def _runs(d: Dashboard, index: dict[str, int]) -> list[str]:
    out = ['<section id="runs">', "<h2>What really runs</h2>"]
    if d.sites is None or d.runtime is None:
        out.append('<p class="muted">No runtime report given. Run the program or its tests with '
                   "the report on (<code>anydev run --report run.json SCRIPT</code>, or "
                   "<code>ANYDEV_REPORT=run.json</code>) and pass <code>--report run.json</code>: "
                   "the page then joins the call sites that ran to the findings.</p></section>")
        return out
    rt = d.runtime
    sites = d.sites
    ran = [s for s in sites if s.calls]
    static = [s for s in sites if not s.calls]
    both = sum(1 for s in ran if s.static)
    cuda = [s for s in sites if s.cuda_only]
    out.append(f"<p>{_plural(rt.calls, 'legacy call')} at {_plural(len(ran), 'site')} in "
               f"{_plural(rt.processes, 'process', 'processes')} "
               f"({', '.join(f'<code>{_e(p)}</code>' for p in rt.paths)}): "
               f"{_n(both)} of them found by the scanner too, "
               f"{_n(len(ran) - both)} seen only at run time; "
               f"{_plural(len(static), 'site')} found by the scanner never ran.</p>")
    if cuda:
        out.append(f'<p class="callout" id="cuda-only">{_plural(len(cuda), "site")} asked for CUDA '
                   "while another accelerator was current: CUDA-only code the run reached. "
                   "They are listed first.</p>")
    head = ('<thead><tr><th></th><th>site</th><th>rule</th><th>legacy → replacement</th>'
            '<th class="n">calls</th><th class="n">found</th><th>seen by</th><th>next step</th>'
            "</tr></thead><tbody>")
    shown = ran  # CUDA-only first: sites.join's order
    first, rest = shown[:max(OPEN_SITES, len(cuda))], shown[max(OPEN_SITES, len(cuda)):]
    out.append(f'<table class="sortable sites" id="sites">{head}')
    out.append("".join(_site_row(s, index) for s in first))
    out.append("</tbody></table>")
    out += _sites_by_module(sites)
    listed = static if len(static) <= LISTED_STATIC_SITES else []
    if static and not listed:
        out.append(f'<p class="muted">The {_n(len(static))} sites that never ran are marked '
                   "<i>never</i> in each file's list below.</p>")
    for what, key, group in ((f"{_plural(len(rest), 'more site')} that ran", "more-sites", rest),
                             (f"{_plural(len(static), 'site')} found by the scanner that never "
                              "ran", "static-sites", listed)):
        if group:
            out.append(f'<details id="{key}"><summary>{what}</summary>'
                       f'<table class="sortable sites">{head}')
            out.append("".join(_site_row(s, index) for s in group))
            out.append("</tbody></table></details>")
    out.append("</section>")
    return out


def _sites_by_module(sites: list[Any]) -> list[str]:
    per: dict[str, Counter] = defaultdict(Counter)
    for s in sites:
        c = per[module_of(s.path)]
        c[s.status] += 1
        c["calls"] += s.calls
    out = ['<table class="sortable" id="sites-by-module"><thead><tr><th>module (folder)</th>'
           '<th class="n">sites found</th><th class="n">of them ran</th>'
           '<th class="n">never ran</th><th class="n">ran, not found</th>'
           '<th class="n">calls</th></tr></thead><tbody>']
    for m, c in sorted(per.items(), key=lambda kv: (-kv[1]["calls"], kv[0])):
        out.append(f'<tr data-module="{_e(m)}"><td class="mono">{_e(m)}</td>'
                   f'<td class="n">{_n(c["both"] + c["static"])}</td>'
                   f'<td class="n">{_n(c["both"])}</td><td class="n">{_n(c["static"])}</td>'
                   f'<td class="n">{_n(c["run"])}</td><td class="n">{_n(c["calls"])}</td></tr>')
    out.append("</tbody></table>")
    return out


def _site_row(s: Any, index: dict[str, int]) -> str:
    seen = {"both": "run and scan", "run": "run only", "static": "scan only"}[s.status]
    verdicts = Counter(i.verdict for i in s.items)
    step = " ".join(f'<span class="v v-{v}">{VERDICT_TEXT[v]}</span>' for v in
                    ("safe", "unsafe", "refused", "manual") if verdicts[v])
    where = f"{_e(s.path)}:{s.line}"
    if s.items and s.items[0].path in index:
        where = f'<a href="#file-{index[s.items[0].path]}">{where}</a>'
    if s.cuda_only:
        return (f'<tr class="flag" data-status="{s.status}"><td><span class="v v-refused">'
                f"CUDA-only</span></td><td>{where}</td><td>{_e(s.rule)}</td>"
                f'<td>{_e(s.legacy)} → {_e(s.replacement or "(none)")}</td>'
                f"<td>{_n(s.calls)}</td><td>{_n(s.static)}</td>"
                f"<td>{seen} — {_e(s.cuda_only)}</td><td>{step}</td></tr>")
    # Note [Large reports]: the cells' look comes from table.sites's CSS.
    return (f'<tr data-status="{s.status}"><td></td><td>{where}</td><td>{_e(s.rule)}</td>'
            f'<td>{_e(s.legacy)} → {_e(s.replacement or "(none)")}</td>'
            f"<td>{_n(s.calls)}</td><td>{_n(s.static)}</td><td>{seen}</td><td>{step}</td></tr>")


# --- progress over time ------------------------------------------------------------------------


def _progress(d: Dashboard) -> list[str]:
    out = ['<section id="progress">', "<h2>Progress over time</h2>"]
    h = d.history
    if h is None:
        out.append('<p class="muted">Run with <code>--history</code> to plot the findings at '
                   "sampled commits of the repository (or <code>--history-tags</code> at its "
                   "tags).</p></section>")
        return out
    pts = h.points
    what = ("tags (and HEAD)" if h.mode == "tags" else
            f"commits that changed <code>{_e(' '.join(h.pathspec))}</code>")
    out.append(f'<p class="muted">{_plural(len(pts), "point")}, from the {_n(h.commits)} '
               f"{what}, "
               f"scanned from git's objects without a checkout ({_n(h.blobs_scanned)} distinct "
               f"files scanned, {_n(h.blobs_reused)} unchanged ones reused, "
               f"{h.seconds:.1f} s).</p>")
    if pts:
        first, last = pts[0].counts.total, pts[-1].counts.total
        if first > last:
            out.append(f"<p>Down from {_n(first)} to {_n(last)} findings "
                       f"({_pct(first - last, first)} fewer) since {_date(pts[0].date)}.</p>")
        elif last > first:
            out.append(f"<p>Up from {_n(first)} to {_n(last)} findings since "
                       f"{_date(pts[0].date)}.</p>")
        out.append(_chart(pts))
        out.append("<p class=\"muted\">" + "".join(
            f'<span class="swatch s-{k}"></span>{label}' for k, label in SERIES) + "</p>")
    out.append('<table class="sortable" id="history"><thead><tr><th>date</th><th>commit</th>'
               '<th>subject</th><th class="n">API</th><th class="n">literals</th>'
               '<th class="n">idioms</th><th class="n">total</th></tr></thead><tbody>')
    for p in pts:
        c = p.counts
        out.append(f'<tr data-commit="{p.commit}"><td data-v="{p.date}">{_date(p.date)}</td>'
                   f'<td class="mono">{_e(p.label)}</td><td>{_e(p.subject)}</td>'
                   f'<td class="n">{_n(c.api)}</td><td class="n">{_n(c.literal)}</td>'
                   f'<td class="n">{_n(c.idiom)}</td><td class="n">{_n(c.total)}</td></tr>')
    out.append("</tbody></table></section>")
    return out


def _date(ts: int) -> str:
    return _dt.datetime.fromtimestamp(ts, _dt.timezone.utc).strftime("%Y-%m-%d")


def _nice(top: int) -> tuple[int, int]:
    """(axis maximum, tick step) for values up to ``top``: 1, 2 or 5 times a power of ten."""
    if top <= 0:
        return 1, 1
    raw = top / 4
    mag = 10 ** int(math.floor(math.log10(raw))) if raw >= 1 else 1
    step = next(s * mag for s in (1, 2, 5, 10) if s * mag >= raw)
    return int(math.ceil(top / step) * step), int(step)


def _chart(pts: list[Any]) -> str:
    left, right, top_pad, bottom = 56, 16, 12, 40
    w, h = CHART_W - left - right, CHART_H - top_pad - bottom
    values = {k: [getattr(p.counts, k) for p in pts] for k, _ in SERIES}
    ymax, step = _nice(max(values["total"]) if pts else 0)
    dates = [p.date for p in pts]
    timed = len(pts) > 1 and all(b > a for a, b in zip(dates, dates[1:]))

    def x_of(i: int) -> float:
        if len(pts) == 1:
            return left + w / 2
        if timed:
            return left + w * (dates[i] - dates[0]) / (dates[-1] - dates[0])
        return left + w * i / (len(pts) - 1)

    def y_of(v: int) -> float:
        return top_pad + h - h * v / ymax

    out = [f'<svg class="chart" id="chart" viewBox="0 0 {CHART_W} {CHART_H}" role="img" '
           f'aria-label="findings per kind at each sampled commit">']
    for v in range(0, ymax + 1, step):
        y = y_of(v)
        out.append(f'<line class="grid" x1="{left}" x2="{left + w}" y1="{y:.1f}" y2="{y:.1f}"/>'
                   f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{_n(v)}</text>')
    out.append(f'<line class="axis" x1="{left}" x2="{left + w}" y1="{top_pad + h}" '
               f'y2="{top_pad + h}"/><line class="axis" x1="{left}" x2="{left}" y1="{top_pad}" '
               f'y2="{top_pad + h}"/>')
    last_x = -1e9
    for i, p in enumerate(pts):  # date labels, as many as fit
        x = x_of(i)
        if x - last_x >= 80 or i == 0:
            anchor = "start" if x < left + 40 else ("end" if x > left + w - 40 else "middle")
            out.append(f'<text x="{x:.1f}" y="{top_pad + h + 16}" text-anchor="{anchor}">'
                       f"{_date(p.date)}</text>")
            last_x = x
    for k, label in SERIES:
        coords = [(x_of(i), y_of(v)) for i, v in enumerate(values[k])]
        if len(coords) > 1:
            out.append(f'<polyline class="line l-{k}" points="'
                       + " ".join(f"{x:.1f},{y:.1f}" for x, y in coords) + '"/>')
        for (x, y), p, v in zip(coords, pts, values[k]):
            out.append(f'<circle class="p-{k}" cx="{x:.1f}" cy="{y:.1f}" r="3.5" '
                       f'data-series="{k}" data-commit="{p.commit}" data-value="{v}">'
                       f"<title>{_e(p.label)} ({_date(p.date)}): {_n(v)} {label}</title></circle>")
    out.append("</svg>")
    return "".join(out)


# --- every finding ---------------------------------------------------------------------------


def _file_lists(d: Dashboard, files: dict[str, list[Item]]) -> list[str]:
    out = ['<section id="files">', "<h2>Every finding, by file</h2>"]
    if not files:
        out.append("<p>None.</p></section>")
        return out
    out.append('<p class="muted">Open a file for its findings; the map\'s tiles link here.</p>')
    calls = None
    if d.sites is not None:  # what ran at each finding's site
        calls = {id(i): s.calls for s in d.sites for i in s.items}
    head = ('<table class="findings"><thead><tr><th>line</th><th>rule</th><th>legacy → '
            "replacement</th><th>kind</th><th>fix</th><th>next step</th><th>why</th>"
            + ("<th>ran</th>" if calls is not None else "") + "</tr></thead><tbody>")
    for n, (path, items) in enumerate(files.items()):
        c = Counter(i.category for i in items)
        v = Counter(i.verdict for i in items)
        summary = (f"{_plural(len(items), 'finding')}: "
                   + ", ".join(_plural(c[k], CATEGORY_ONE[k]) for k in ("api", "literal", "idiom")
                               if c[k])
                   + "; " + ", ".join(f"{_n(v[k])} {VERDICT_TEXT[k]}" for k in
                                      ("safe", "unsafe", "refused", "manual") if v[k]))
        # The map's tiles link to the table: a browser opens the <details>
        # around a link's target, with or without JavaScript.
        out.append(f'<details class="file" id="list-{n}" data-path="{_e(path)}" '
                   f'data-summary="{_e(summary)}"><summary>{_e(path)} — {_e(summary)}</summary>'
                   + head.replace("<table ", f'<table id="file-{n}" ', 1))
        # Note [Large reports]: the cells' look comes from table.findings's CSS
        # (by column), not from attributes repeated on every cell.
        rows = []
        for i in items:
            ran = ""
            if calls is not None:
                k = calls.get(id(i), 0)
                ran = f"<td>{_n(k)}×</td>" if k else "<td>never</td>"
            rows.append(f"<tr><td>{i.line}</td><td>{i.rule}</td>"
                        f'<td>{_e(i.symbol)} → {_e(i.replacement or "(none)")}</td>'
                        f'<td class="c-{i.category}">{i.kind}</td><td>{i.fix}</td>'
                        f'<td><span class="v v-{i.verdict}">{VERDICT_TEXT[i.verdict]}</span>'
                        f'{" (accepted)" if i.accepted else ""}</td>'
                        f"<td>{_e(i.reason)}</td>{ran}</tr>")
        out.append("".join(rows))
        out.append("</tbody></table></details>")
    out.append("</section>")
    return out


def _errors(d: Dashboard) -> list[str]:
    out = ['<section id="errors">', "<h2>Files not scanned soundly</h2>",
           '<table><thead><tr><th>file</th><th>problem</th></tr></thead><tbody>']
    for path, line, message in d.errors:
        out.append(f'<tr><td class="loc">{_e(path)}{":" + str(line) if line else ""}</td>'
                   f"<td>{_e(message)}</td></tr>")
    out.append("</tbody></table></section>")
    return out
