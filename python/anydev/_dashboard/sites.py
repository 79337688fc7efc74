"""What really runs: the runtime reports' call sites joined to the static
findings, one row per site.

A *site* is a (file, line, rule) triple. The runtime report names a call by
its caller's file and line and the rule of the legacy entry point
(:mod:`anydev.report`); the scanner names a finding by its path, line and
rule. The rule, not the spelling, is the key: a call written through an
``also`` spelling (``at::cuda::device_count`` for ``c10::cuda::device_count``)
or an alias (``cd()`` for ``torch.cuda.current_device``) has its own text but
the rule of its row. Paths are compared as real paths: a runtime report names
files as the interpreter saw them (absolute under ``anydev run``), the scan as
given on the command line (relative to the current folder).

Each site is then:

* ``both``: found by the scanner and seen running (``calls`` counted);
* ``run``: seen only at run time (a call the scanner cannot see: ``getattr``,
  a file outside the scanned paths, generated code);
* ``static``: found only by the scanner (never reached by the runs given).

Note [CUDA-only marker]: under ``anydev run --torch --accelerator sim``
(docs/torch.md, "A whole run on sim, and the CUDA-only code it reaches") a
call that asked for CUDA while another accelerator was current is CUDA-only
code the run found. Its call record carries ``"cuda_only": true`` (a bool:
anydev.report.load refuses anything else) and ``"raised"``, how many of its
``count`` calls raised (anydev/_torch/cuda_only.py writes both; anydev.report
.merge adds ``raised`` up). Such sites are what a migration to another
accelerator must fix first: they sort first and are flagged on the page, with
their calls and how many raised (code that asks for CUDA as often takes a CPU
path silently as it fails). A report without the key (every report of a run
without ``--accelerator``) has no such sites.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional, Sequence

__all__ = ["Site", "cuda_only_of", "cuda_only_text", "join"]


@dataclass
class Site:
    """One call site: where, which rule, what ran there and what the scanner
    found there."""

    path: str                 # as shown: relative to the root when under it
    line: int
    rule: str
    legacy: str
    replacement: str
    calls: int = 0            # legacy calls counted at run time
    static: int = 0           # the scanner's findings at this site
    cuda_only: Optional[str] = None  # why the site is CUDA-only, or None
    cuda_calls: int = 0       # its calls that asked for CUDA (Note [CUDA-only marker])
    raised: int = 0           # of them, the calls that raised
    reports: int = 0          # how many of the runtime reports saw it
    items: list[Any] = field(default_factory=list)  # the static findings

    @property
    def status(self) -> str:
        """"both", "run" (seen only at run time) or "static" (only found)."""
        if self.calls and self.static:
            return "both"
        return "run" if self.calls else "static"


def cuda_only_of(call: dict[str, Any]) -> Optional[tuple[int, int]]:
    """(calls, raised) of a runtime call record marked CUDA-only (Note
    [CUDA-only marker]); None when it is not."""
    if call.get("cuda_only") is not True:
        return None
    raised = call.get("raised", 0)
    return call["count"], raised if isinstance(raised, int) and not isinstance(raised, bool) else 0


def cuda_only_text(calls: int, raised: int) -> str:
    """Why a site is CUDA-only, with its calls and how many raised."""
    return (f"asked for CUDA while another accelerator was current ({calls} call"
            f"{'s' if calls != 1 else ''}, " + (f"{raised} raised" if raised else "none raised")
            + ")")


class _Paths:
    """Real paths of the file names of reports and scans, each resolved once,
    and how they are shown (relative to the root when under it)."""

    def __init__(self, root: str) -> None:
        self.root = os.path.realpath(root)
        self._real: dict[str, str] = {}

    def real(self, name: str) -> str:
        r = self._real.get(name)
        if r is None:
            if name.startswith("<") and name.endswith(">"):  # <string>, <stdin>
                r = name
            else:
                r = os.path.realpath(os.path.join(self.root, name))
            self._real[name] = r
        return r

    def shown(self, real: str) -> str:
        if real.startswith(self.root + os.sep):
            return os.path.relpath(real, self.root)
        return real


def join(reports: Sequence[dict[str, Any]], items: Iterable[Any], root: str) -> list[Site]:
    """The sites of ``reports`` (runtime reports, merged as given: their
    counts add up) and ``items`` (static findings with ``path``, ``line``,
    ``rule``, ``symbol``, ``replacement``), file names of both relative to
    ``root``. CUDA-only sites first (most calls first), then the sites that
    ran (most calls first), then those only found, by path and line."""
    paths = _Paths(root)
    sites: dict[tuple[str, int, str], Site] = {}
    for item in items:
        key = (paths.real(item.path), item.line, item.rule)
        s = sites.get(key)
        if s is None:
            s = sites[key] = Site(paths.shown(key[0]), item.line, item.rule, item.symbol,
                                  item.replacement)
        s.static += 1
        s.items.append(item)
    for report in reports:
        for c in report.get("calls", ()):
            key = (paths.real(c["file"]), c["line"], c["rule"])
            s = sites.get(key)
            if s is None:
                s = sites[key] = Site(paths.shown(key[0]), c["line"], c["rule"], c["legacy"],
                                      c.get("replacement") or "")
            s.calls += c["count"]
            s.reports += 1
            marked = cuda_only_of(c)
            if marked is not None:
                s.cuda_calls += marked[0]
                s.raised += marked[1]
                s.cuda_only = cuda_only_text(s.cuda_calls, s.raised)
    return sorted(sites.values(), key=lambda s: (s.cuda_only is None, s.calls == 0, -s.calls,
                                                 s.path, s.line, s.rule))
