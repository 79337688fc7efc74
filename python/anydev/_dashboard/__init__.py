"""The migration dashboard behind ``anydev report html``: one self-contained
HTML page that shows where the legacy code is, what the next step costs,
what really runs and how the count went down over the repository's history.

* ``stats``: the statistics model of a scan's findings (by module, file,
  rule, fix level, kind and the torch release that unlocks each fix), the one
  model both the page and ``anydev scan --statistics --format json`` read;
* ``model``: the page's data: the findings with the fixer's verdict on each
  (``anydev.fix``), the baseline's share, the runtime reports joined to the
  static findings (``sites``) and the history (``history``);
* ``sites``: the join of runtime call sites and static findings;
* ``history``: the findings at sampled commits (or tags), scanned from git's
  blobs without a checkout;
* ``render``: the page itself (inline CSS, SVG and a little JavaScript, no
  network), readable with JavaScript off.

The dashboard reads what the migration tools make and needs no device: it
sits above migrate and never imports the runtime (``anydev._C``).

May import: migrate, compat, common, the native extensions.
"""
