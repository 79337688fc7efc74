"""``anydev server``: the language server (see the package's docstring and
docs/editors.md).

Note [Server loop]: a reader thread reads the client's messages into a
queue; the main thread takes every message waiting, in order, handles each
(a change is applied to its document at once, a request answered with the
text as it is at that point), and only when the queue is empty checks the
documents that changed and publishes their diagnostics. So a burst of
keystrokes costs one check of the file, not one per keystroke, and the
answer to a change comes as soon as the last change of the burst is read.
A request cancelled ($/cancelRequest) before it is handled is answered with
RequestCancelled. Whatever a handler raises is answered as an internal error
(or, for a notification, logged to the client): the server stays up. It
ends at ``exit``, at the end of its input, or when the client's process
(--clientProcessId, or initialize's processId) is gone (Note [Client
process]).
"""

from __future__ import annotations

import os
import queue
import sys
import threading
import time
from typing import Any, Callable, Optional
from urllib.parse import quote, unquote, urlparse

from anydev._common import config as _config
from anydev._migrate import changed_lines as _changed_lines
from anydev._migrate import check as _check
from anydev._migrate import scan_table as _scan_table
from anydev._migrate import notebook as _notebook

from . import rpc
from .documents import ChangeError, Encoding, Notebook, TextDocument

NAME = "anydev"

#: LSP's DiagnosticSeverity and DiagnosticTag.
ERROR, WARNING, INFORMATION, HINT = 1, 2, 3, 4
DEPRECATED = 2
#: LSP's TextDocumentSyncKind.Incremental.
INCREMENTAL = 2

FIX_ALL_KIND = "source.fixAll.anydev"
_LANGUAGES = {"python": "python", "cpp": "cpp", "c": "cpp", "cuda": "cpp", "cuda-cpp": "cpp",
              "hip": "cpp", "objective-cpp": None, "jupyter": "notebook"}


def _version() -> str:
    """The installed package's version (without loading the device runtime,
    whose extension holds anydev.__version__)."""
    try:
        from importlib.metadata import version

        return version("anydev")
    except Exception:  # noqa: BLE001 - not installed (run from the sources)
        return "unknown"


def uri_to_path(uri: str) -> Optional[str]:
    """The local path of a ``file:`` URI, else None."""
    u = urlparse(uri)
    if u.scheme != "file":
        return None
    path = unquote(u.path)
    if u.netloc and u.netloc != "localhost":
        path = f"//{u.netloc}{path}"
    return path


def path_to_uri(path: str) -> str:
    return "file://" + quote(os.path.abspath(path))


class _Checked:
    """A document's check at one version: the path it was checked as, its
    settings, the check, and the notebook cell URIs by number."""

    __slots__ = ("uri", "version", "path", "settings", "checked", "error", "cells", "_target")

    def __init__(self, uri, version, path, settings, checked, error=None, cells=None) -> None:
        self.uri, self.version, self.path, self.settings = uri, version, path, settings
        self.checked, self.error, self.cells = checked, error, cells
        self._target = None

    def target(self):
        """The target torch the file is fixed for (as `anydev fix` finds it)."""
        if self._target is None:
            from anydev._migrate import torch_versions as _versions

            s = self.settings
            self._target = _versions.resolve_target(s.target_torch) if s.target_torch else (
                _versions.ProjectTargets().for_file(self.path) or _versions.DEFAULT)
        return self._target


class Server:
    def __init__(self, reader: rpc.Reader, writer: rpc.Writer, *,
                 config: Optional[str] = None, client_pid: Optional[int] = None,
                 poll: float = 1.0, diff_base: Optional[str] = None) -> None:
        self.reader, self.out = reader, writer
        self.config_file = config
        self.client_pid = client_pid
        self.poll = poll
        self.encoding = Encoding("utf-16")
        self.initialized = False
        self.shut_down = False
        self.exit_code: Optional[int] = None
        self.docs: dict[str, TextDocument] = {}
        self.notebooks: dict[str, Notebook] = {}
        self.cell_owner: dict[str, str] = {}  # cell URI -> notebook URI
        self.dirty: dict[str, None] = {}  # documents (or notebooks) to check, in order
        self.published: dict[str, bool] = {}  # URIs with diagnostics out
        self.checks: dict[str, _Checked] = {}
        self._configs: dict[str, tuple] = {}  # config path -> (mtime, Config or error)
        self._found: dict[str, Optional[str]] = {}  # folder -> config path
        self.roots: list[str] = []
        self.queue: "queue.Queue[Any]" = queue.Queue()
        self.hover_markdown = True
        # Note [The ratchet in the editor]
        self.diff_base = diff_base
        self.old_findings = "dim"
        self._bases: dict[str, Any] = {}  # folder -> BaseVersions, or the reason it has none

    # --- the loop (Note [Server loop]) ---------------------------------------------

    def run(self) -> int:
        threading.Thread(target=self._read, name="anydev-server-reader", daemon=True).start()
        if self.client_pid:
            self._watch(self.client_pid)
        while self.exit_code is None:
            batch = [self.queue.get()]
            while True:
                try:
                    batch.append(self.queue.get_nowait())
                except queue.Empty:
                    break
            cancelled = {m["params"].get("id") for m in batch
                         if isinstance(m, dict) and m.get("method") == "$/cancelRequest"
                         and isinstance(m.get("params"), dict)}
            for msg in batch:
                if self.exit_code is not None:
                    break
                self._dispatch(msg, cancelled)
            if self.exit_code is None and self.queue.empty():
                self._publish_dirty()
        return self.exit_code

    def _read(self) -> None:
        while True:
            try:
                msg = self.reader.read()
            except Exception as e:  # noqa: BLE001 - an input error ends the input
                self.queue.put(("end", f"cannot read the input: {e}"))
                return
            if msg is None:
                self.queue.put(("end", None))
                return
            self.queue.put(msg)

    def _dispatch(self, msg: Any, cancelled: set) -> None:
        if isinstance(msg, tuple):  # the end of the input, or the client's process gone
            self.exit_code = 0 if self.shut_down else 1
            return
        if isinstance(msg, rpc.Invalid):
            self.out.error(msg.id, msg.code, msg.message)
            return
        method = msg.get("method")
        if method is None:
            return  # a response to a request of ours (we send none that wait)
        mid = msg.get("id")
        is_request = "id" in msg
        params = msg.get("params")
        if params is None:
            params = {}
        if is_request and mid in cancelled:
            self.out.error(mid, rpc.REQUEST_CANCELLED, "cancelled")
            return
        if not self.initialized and method not in ("initialize", "exit"):
            if is_request:
                self.out.error(mid, rpc.SERVER_NOT_INITIALIZED,
                               f"{method}: the server is not initialized")
            return
        if self.shut_down and method != "exit":
            if is_request:
                self.out.error(mid, rpc.INVALID_REQUEST, f"{method}: the server was shut down")
            return
        handler = (self.REQUESTS if is_request else self.NOTIFICATIONS).get(method)
        if handler is None:
            if is_request:
                self.out.error(mid, rpc.METHOD_NOT_FOUND, f"unknown method {method!r}")
            return  # an unknown notification is ignored ($/ ones included)
        try:
            result = handler(self, params)
        except _ParamsError as e:
            if is_request:
                self.out.error(mid, rpc.INVALID_PARAMS, f"{method}: {e}")
            else:
                self._log(f"{method}: {e}", ERROR)
            return
        except Exception as e:  # noqa: BLE001 - never down for one message
            text = f"{method}: internal error: {type(e).__name__}: {e}"
            if is_request:
                self.out.error(mid, rpc.INTERNAL_ERROR, text)
            else:
                self._log(text, ERROR)
            return
        if is_request:
            self.out.respond(mid, result)

    def _log(self, message: str, kind: int = INFORMATION) -> None:
        self.out.notify("window/logMessage", {"type": kind, "message": f"anydev: {message}"})

    # Note [Client process]: the LSP asks a server to exit when the process
    # that started it is gone (initialize's processId). Its input closing says
    # so too, but not where the client's children hold the pipe. A thread
    # polls the process every `poll` seconds (a process that has exited but
    # is not reaped yet, a zombie, counts as gone) and ends the loop; if the
    # loop is stuck in a check, the process exits after a grace period.
    def _watch(self, pid: int) -> None:
        def alive() -> bool:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return False
            except PermissionError:
                pass
            except OSError:
                return False
            try:
                with open(f"/proc/{pid}/stat", "rb") as f:
                    stat = f.read()
                return stat[stat.rfind(b")") + 2:][:1] not in (b"Z", b"X")
            except OSError:
                return True  # no /proc: kill's answer stands

        def watch() -> None:
            while alive():
                time.sleep(self.poll)
            self.queue.put(("end", f"the client's process {pid} is gone"))
            time.sleep(max(5.0, 5 * self.poll))
            os._exit(1)

        threading.Thread(target=watch, name="anydev-server-client", daemon=True).start()

    # --- lifecycle -------------------------------------------------------------------

    def initialize(self, params: dict) -> dict:
        if self.initialized:
            raise _ParamsError("initialize was already sent")
        caps = _dict(params.get("capabilities"))
        general = _dict(caps.get("general"))
        offered = general.get("positionEncodings")
        if isinstance(offered, list):
            for name in offered:
                if name in ("utf-8", "utf-16", "utf-32"):
                    self.encoding = Encoding(name)
                    break
        pid = params.get("processId")
        if self.client_pid is None and isinstance(pid, int) and not isinstance(pid, bool) \
                and pid > 0:
            self.client_pid = pid
            self._watch(pid)
        for folder in params.get("workspaceFolders") or []:
            p = uri_to_path(_dict(folder).get("uri", "")) if isinstance(folder, dict) else None
            if p:
                self.roots.append(p)
        root = params.get("rootUri")
        if not self.roots and isinstance(root, str) and uri_to_path(root):
            self.roots.append(uri_to_path(root))
        hover = _dict(_dict(caps.get("textDocument")).get("hover"))
        formats = hover.get("contentFormat")
        if isinstance(formats, list) and "markdown" not in formats:
            self.hover_markdown = False
        options = _dict(params.get("initializationOptions"))
        if isinstance(options.get("config"), str) and self.config_file is None:
            self.config_file = options["config"]
        if isinstance(options.get("diffBase"), str) and options["diffBase"] and \
                self.diff_base is None:
            self.diff_base = options["diffBase"]
        old = options.get("oldFindings")
        if old is not None:
            if old not in ("dim", "hide", "show"):
                raise _ParamsError(f"initializationOptions.oldFindings: {old!r} is not one "
                                   f"of 'dim', 'hide', 'show'")
            self.old_findings = old
        self.initialized = True
        return {
            "capabilities": {
                "positionEncoding": self.encoding.name,
                "textDocumentSync": {"openClose": True, "change": INCREMENTAL,
                                     "save": {"includeText": False}},
                "notebookDocumentSync": {
                    "notebookSelector": [{"notebook": "*", "cells": [{"language": "python"}]}],
                    "save": True},
                "codeActionProvider": {"codeActionKinds": ["quickfix", FIX_ALL_KIND]},
                "hoverProvider": True,
            },
            "serverInfo": {"name": NAME, "version": _version()},
        }

    def initialized_(self, params: dict) -> None:
        pass

    def shutdown(self, params: Any) -> None:
        self.shut_down = True
        return None

    def exit_(self, params: Any) -> None:
        self.exit_code = 0 if self.shut_down else 1

    # --- text documents ------------------------------------------------------------

    def did_open(self, params: dict) -> None:
        item = _dict(params.get("textDocument"))
        uri, text = item.get("uri"), item.get("text")
        if not isinstance(uri, str) or not isinstance(text, str):
            raise _ParamsError("textDocument needs a `uri` and a `text`")
        self.docs[uri] = TextDocument(uri, str(item.get("languageId") or ""),
                                      _int(item.get("version")), text)
        self._touch(uri)

    def did_change(self, params: dict) -> None:
        ident = _dict(params.get("textDocument"))
        doc = self.docs.get(ident.get("uri"))
        if doc is None:
            raise _ParamsError(f"{ident.get('uri')!r} is not open")
        changes = params.get("contentChanges")
        if not isinstance(changes, list):
            raise _ParamsError("contentChanges must be a list")
        self._apply(doc, changes)
        doc.version = _int(ident.get("version"), doc.version)
        self._touch(doc.uri)

    def _apply(self, doc: TextDocument, changes: list) -> None:
        try:
            for change in changes:
                doc.apply(change, self.encoding)
        except ChangeError as e:
            raise _ParamsError(str(e)) from None

    def did_save(self, params: dict) -> None:
        uri = _dict(params.get("textDocument")).get("uri")
        path = uri_to_path(uri) if isinstance(uri, str) else None
        self._bases.clear()  # a save is where a commit may follow: the base again
        if path and os.path.basename(path) in ("pyproject.toml", "anydev.toml"):
            self._config_changed()
        elif isinstance(uri, str) and (uri in self.docs or uri in self.notebooks):
            self._touch(uri)

    def did_close(self, params: dict) -> None:
        uri = _dict(params.get("textDocument")).get("uri")
        self.docs.pop(uri, None)
        self.checks.pop(uri, None)
        self.dirty.pop(uri, None)
        if self.published.pop(uri, False):
            self._send(uri, [])

    def did_change_watched_files(self, params: dict) -> None:
        self._config_changed()

    def did_change_configuration(self, params: dict) -> None:
        self._config_changed()

    def _config_changed(self) -> None:
        self._configs.clear()
        self._bases.clear()  # a commit or a checkout moves the merge base
        self._found.clear()
        self.checks.clear()
        for uri in list(self.docs) + list(self.notebooks):
            if uri not in self.cell_owner:
                self._touch(uri)

    def _touch(self, uri: str) -> None:
        owner = self.cell_owner.get(uri)
        key = owner or uri
        self.checks.pop(key, None)
        self.dirty[key] = None

    # --- notebooks -----------------------------------------------------------------

    def nb_did_open(self, params: dict) -> None:
        nb = _dict(params.get("notebookDocument"))
        uri = nb.get("uri")
        if not isinstance(uri, str):
            raise _ParamsError("notebookDocument needs a `uri`")
        cells = [[_int(_dict(c).get("kind"), 2), _dict(c).get("document")]
                 for c in nb.get("cells") or [] if isinstance(c, dict)]
        self.notebooks[uri] = Notebook(uri, str(nb.get("notebookType") or ""),
                                       _int(nb.get("version")), cells)
        for item in params.get("cellTextDocuments") or []:
            self._open_cell(uri, _dict(item))
        for _kind, cell in cells:
            if isinstance(cell, str):
                self.cell_owner[cell] = uri
        self._touch(uri)

    def _open_cell(self, owner: str, item: dict) -> None:
        uri, text = item.get("uri"), item.get("text")
        if not isinstance(uri, str) or not isinstance(text, str):
            raise _ParamsError("a cell's text document needs a `uri` and a `text`")
        self.docs[uri] = TextDocument(uri, str(item.get("languageId") or ""),
                                      _int(item.get("version")), text)
        self.cell_owner[uri] = owner

    def nb_did_change(self, params: dict) -> None:
        ident = _dict(params.get("notebookDocument"))
        nb = self.notebooks.get(ident.get("uri"))
        if nb is None:
            raise _ParamsError(f"{ident.get('uri')!r} is not an open notebook")
        nb.version = _int(ident.get("version"), nb.version)
        cells = _dict(_dict(params.get("change")).get("cells"))
        structure = _dict(cells.get("structure"))
        if structure:
            array = _dict(structure.get("array"))
            start, count = _int(array.get("start")), _int(array.get("deleteCount"))
            new = [[_int(_dict(c).get("kind"), 2), _dict(c).get("document")]
                   for c in array.get("cells") or [] if isinstance(c, dict)]
            if not 0 <= start <= len(nb.cells) or count < 0:
                raise _ParamsError(f"a cell array change at {start} of {len(nb.cells)} cells")
            nb.cells[start:start + count] = new
            for item in structure.get("didOpen") or []:
                self._open_cell(nb.uri, _dict(item))
            for ident_ in structure.get("didClose") or []:
                u = _dict(ident_).get("uri")
                self.docs.pop(u, None)
                self.cell_owner.pop(u, None)
                if self.published.pop(u, False):
                    self._send(u, [])
        for data in cells.get("data") or []:
            d = _dict(data)
            for c in nb.cells:
                if c[1] == d.get("document"):
                    c[0] = _int(d.get("kind"), c[0])
        for tc in cells.get("textContent") or []:
            tc = _dict(tc)
            ident_ = _dict(tc.get("document"))
            doc = self.docs.get(ident_.get("uri"))
            if doc is None:
                raise _ParamsError(f"cell {ident_.get('uri')!r} is not open")
            changes = tc.get("changes")
            if not isinstance(changes, list):
                raise _ParamsError("a cell's changes must be a list")
            self._apply(doc, changes)
            doc.version = _int(ident_.get("version"), doc.version)
        self._touch(nb.uri)

    def nb_did_save(self, params: dict) -> None:
        uri = _dict(params.get("notebookDocument")).get("uri")
        if uri in self.notebooks:
            self._touch(uri)

    def nb_did_close(self, params: dict) -> None:
        uri = _dict(params.get("notebookDocument")).get("uri")
        nb = self.notebooks.pop(uri, None)
        self.checks.pop(uri, None)
        self.dirty.pop(uri, None)
        cells = [c for _k, c in nb.cells] if nb else []
        cells += [_dict(c).get("uri") for c in params.get("cellTextDocuments") or []]
        for cell in cells:
            self.docs.pop(cell, None)
            self.cell_owner.pop(cell, None)
            if self.published.pop(cell, False):
                self._send(cell, [])

    # --- checking --------------------------------------------------------------------

    def _settings(self, path: Optional[str]) -> "_check.Settings":
        """The settings of the file ``path`` (None: a document without a file):
        its nearest configuration, as ``anydev scan`` run on it reads it."""
        if self.config_file is not None:
            cfg_path: Optional[str] = os.path.abspath(self.config_file)
        else:
            start = os.path.dirname(path) if path else (self.roots[0] if self.roots
                                                        else os.getcwd())
            cfg_path = self._found.get(start, "")
            if cfg_path == "":
                cfg_path = self._found[start] = _config.find(start)
        if cfg_path is None:  # no configuration: the defaults, rooted at the file's folder
            key, mtime = "\0" + (os.path.dirname(path) if path else ""), None
        else:
            key = cfg_path
            try:
                mtime = os.stat(cfg_path).st_mtime_ns
            except OSError:
                mtime = None
        got = self._configs.get(key)
        if got is None or got[0] != mtime:
            try:
                if cfg_path is None:
                    cfg = _config.Config(root=os.path.dirname(path) if path else os.getcwd())
                else:
                    cfg = _config.load_file(cfg_path)
                value: Any = _check.settings(cfg)
            except ValueError as e:  # ConfigError too
                value = _ConfigProblem(str(e))
            got = self._configs[key] = (mtime, value)
        if isinstance(got[1], _ConfigProblem):
            raise got[1]
        return got[1]

    def _check(self, uri: str) -> Optional[_Checked]:
        """The check of a document or notebook at its current version (cached)."""
        got = self.checks.get(uri)
        nb = self.notebooks.get(uri)
        doc = self.docs.get(uri)
        version = nb.version if nb else doc.version if doc else None
        if got is not None and got.version == (version, self._cells_version(nb)):
            return got
        if nb is None and doc is None:
            return None
        path = uri_to_path(uri)
        try:
            settings = self._settings(path)
        except _ConfigProblem as e:
            got = _Checked(uri, (version, self._cells_version(nb)), path, None, None,
                           error=str(e))
            self.checks[uri] = got
            return got
        shown = path or uri
        cells = None
        if nb is not None:
            data, cells = self._notebook_bytes(nb)
            language = "notebook"
            if not shown.lower().endswith(".ipynb"):
                shown += ".ipynb"
        else:
            data = doc.text.encode("utf-8", "surrogatepass")
            language = _check.language_of(shown) or _LANGUAGES.get(doc.language.lower())
        if path is not None and settings.excluded(path):
            checked = None
        elif language is None:
            checked = None
        else:
            from anydev._migrate.output import UsageError

            try:
                checked = _check.check_source(data, shown, settings, language=language)
            except UsageError as e:  # the baseline cannot be read
                got = _Checked(uri, (version, self._cells_version(nb)), path, None, None,
                               error=str(e))
                self.checks[uri] = got
                return got
        got = _Checked(uri, (version, self._cells_version(nb)), shown, settings, checked,
                       cells=cells)
        self.checks[uri] = got
        return got

    def _cells_version(self, nb: Optional[Notebook]) -> Any:
        if nb is None:
            return None
        return tuple((c, self.docs[c].version if c in self.docs else None) for _k, c in nb.cells)

    def _notebook_bytes(self, nb: Notebook) -> tuple:
        """A notebook document as an nbformat 4 file's bytes (what
        anydev._migrate.check reads), and its cells' URIs by number."""
        import json

        cells = []
        uris = {}
        for k, (kind, uri) in enumerate(nb.cells):
            doc = self.docs.get(uri)
            text = doc.text if doc is not None else ""
            code = kind == 2 and (doc is None or doc.language in ("python", ""))
            cells.append({"cell_type": "code" if code else "markdown", "metadata": {},
                          "source": text, **({"outputs": [], "execution_count": None}
                                             if code else {})})
            uris[k + 1] = uri
        doc = {"cells": cells, "metadata": {"language_info": {"name": "python"}},
               "nbformat": 4, "nbformat_minor": 5}
        return json.dumps(doc, ensure_ascii=False).encode("utf-8", "surrogatepass"), uris

    def _publish_dirty(self) -> None:
        while self.dirty:
            uri = next(iter(self.dirty))
            del self.dirty[uri]
            try:
                self._publish(uri)
            except Exception as e:  # noqa: BLE001 - one document's failure is logged
                self._log(f"checking {uri}: internal error: {type(e).__name__}: {e}", ERROR)

    def _publish(self, uri: str) -> None:
        got = self._check(uri)
        if got is None:
            return
        if got.cells is not None:  # a notebook: per cell
            per: dict = {u: [] for u in got.cells.values()}
            if got.error is not None:
                first = next(iter(per), None)
                if first:
                    per[first].append(self._config_diagnostic(got.error))
            elif got.checked is not None:
                for f in got.checked.findings:
                    cell_uri = got.cells.get(f.cell)
                    doc = self.docs.get(cell_uri)
                    if doc is not None:
                        per[cell_uri].append(self._diagnostic(f, doc, got))
                first = next(iter(per), None)
                for e in got.checked.errors:
                    if first:
                        per[first].append(self._error_diagnostic(e, None))
            for cell_uri, diags in per.items():
                self._send(cell_uri, diags, self.docs[cell_uri].version
                           if cell_uri in self.docs else None)
            return
        doc = self.docs[uri]
        if got.error is not None:
            diags = [self._config_diagnostic(got.error)]
        elif got.checked is None:
            diags = []
        else:
            new = self._new_lines(uri_to_path(uri), doc)
            diags = []
            for f in got.checked.findings:
                d = self._diagnostic(f, doc, got)
                if new is not None and not _changed_lines.covers(new, f.line, f.end_line):
                    if self.old_findings == "hide":
                        continue
                    if self.old_findings == "dim":
                        d["severity"] = HINT
                        d["message"] += f" (on a line older than {self.diff_base})"
                diags.append(d)
            diags += [self._error_diagnostic(e, doc) for e in got.checked.errors]
        self._send(uri, diags, doc.version)

    # Note [The ratchet in the editor]: with a diff base (`anydev server
    # --diff-base REV`, or initializationOptions.diffBase), a finding on a line
    # the buffer has added or changed since the merge base of REV and HEAD is
    # shown as usual, and one on an older line is dimmed (severity Hint, which
    # editors show faintly and leave out of their problem lists;
    # oldFindings "dim"), hidden ("hide") or shown ("show"): what `anydev scan
    # --diff-base REV` reports is what stands out. The lines are the buffer's,
    # not the file's on disk: the buffer is diffed against the file's text at
    # the base (renames followed; a file new since then is new throughout).
    # Where there is no base (not a git work tree, an unknown REV) every
    # finding is shown, and the reason is logged once a folder. Notebook
    # cells are shown as usual. A save or a change of watched files reads the
    # base again (a commit or a checkout moves it).

    def _new_lines(self, path: Optional[str], doc: TextDocument):
        """The buffer's lines new since the diff base, as
        anydev._migrate.changed_lines ranges; None: no ratchet here."""
        if not self.diff_base or not path:
            return None
        folder = os.path.dirname(os.path.abspath(path))
        bases = self._bases.get(folder)
        if bases is None:
            try:
                bases = _changed_lines.BaseVersions(self.diff_base, folder)
            except _changed_lines.DiffBaseError as e:
                bases = str(e)
                self._log(f"{e}: every finding is shown", WARNING)
            self._bases[folder] = bases
        if isinstance(bases, str):
            return None
        return _changed_lines.new_line_ranges(bases.text(path), doc.text.encode("utf-8"))

    def _send(self, uri: str, diagnostics: list, version: Optional[int] = None) -> None:
        params: dict = {"uri": uri, "diagnostics": diagnostics}
        if version is not None:
            params["version"] = version
        self.published[uri] = bool(diagnostics)
        self.out.notify("textDocument/publishDiagnostics", params)

    def _range(self, doc: TextDocument, f) -> dict:
        enc = self.encoding
        return {"start": doc.position(f.line, f.column, enc),
                "end": doc.position(f.end_line, f.end_column, enc)}

    def _diagnostic(self, f, doc: TextDocument, got: _Checked) -> dict:
        from anydev._migrate import rules as _rules

        row = _row(f.rule)
        fix = f.fix
        level = {"safe": "safe fix", "unsafe": "unsafe fix"}.get(fix)
        note = ""
        if level is not None and row is not None:
            why = _target_refusal(row, got)
            note = f" ({level}; not applied: {why})" if why else f" ({level})"
        d = {"range": self._range(doc, f),
             "severity": INFORMATION if row is not None and row.opt_in else WARNING,
             "code": f.rule,
             "codeDescription": {"href": _rules.rule_url(f.rule)},
             "source": NAME,
             "message": f.message + note,
             "data": {"fix": fix, "symbol": f.symbol, "replacement": f.replacement,
                      "kind": f.kind}}
        if row is not None and row.status == "deprecated" and \
                row.code in _scan_table.PYTORCH_DEPRECATED:
            # only what PyTorch itself deprecates is struck through; the rest of
            # torch.cuda is device-specific, not deprecated (anydev.scan.message_for)
            d["tags"] = [DEPRECATED]
        return d

    def _error_diagnostic(self, e, doc: Optional[TextDocument]) -> dict:
        from anydev._migrate.output import error_level

        line = max((e.line or 1) - 1, 0)
        if doc is not None:
            line = min(line, len(doc.lines) - 1)
        return {"range": {"start": {"line": line, "character": 0},
                          "end": {"line": line, "character": 0}},
                "severity": ERROR if error_level(e) == "error" else WARNING,
                "source": NAME, "message": e.message}

    def _config_diagnostic(self, message: str) -> dict:
        return {"range": {"start": {"line": 0, "character": 0},
                          "end": {"line": 0, "character": 0}},
                "severity": ERROR, "source": NAME,
                "message": f"configuration error: {message}"}

    # --- code actions --------------------------------------------------------------

    def code_action(self, params: dict) -> list:
        uri = _dict(params.get("textDocument")).get("uri")
        doc = self.docs.get(uri)
        if doc is None:
            raise _ParamsError(f"{uri!r} is not open")
        owner = self.cell_owner.get(uri)
        got = self._check(owner or uri)
        if got is None or got.checked is None:
            return []
        rng = params.get("range")
        try:
            from .documents import _position

            start, end = _position(rng, "start"), _position(rng, "end")
        except ChangeError as e:
            raise _ParamsError(str(e)) from None
        only = _dict(params.get("context")).get("only")
        wants: Callable[[str], bool] = (lambda kind: True) if not isinstance(only, list) else (
            lambda kind: any(kind == o or kind.startswith(o + ".") for o in only
                             if isinstance(o, str)))
        findings = got.checked.findings
        cell = None
        if owner is not None:
            cell = next((n for n, u in got.cells.items() if u == uri), None)
            mine = [f for f in findings if f.cell == cell]
        else:
            mine = findings
        actions: list = []
        hits = [f for f in mine if self._overlaps(doc, f, start, end)]
        if wants("quickfix"):
            for f in hits:
                diag = self._diagnostic(f, doc, got)
                if f.fix in ("safe", "unsafe"):
                    act = self._fix_action(got, [f], unsafe=f.fix == "unsafe",
                                           title=self._fix_title(f), diag=diag)
                    if act is not None:
                        actions.append(act)
                act = self._noqa_action(got, doc, f, diag)
                if act is not None:
                    actions.append(act)
        safe = [f for f in findings if f.fix == "safe"]
        if safe:
            for kind in ("quickfix", FIX_ALL_KIND) if hits else (FIX_ALL_KIND,):
                if not wants(kind) or (kind == FIX_ALL_KIND and not isinstance(only, list)
                                       and hits):
                    continue
                act = self._fix_action(got, safe, unsafe=False, kind=kind,
                                       title="anydev: fix all safe fixes in this file")
                if act is not None:
                    actions.append(act)
        return actions

    def _overlaps(self, doc: TextDocument, f, start: tuple, end: tuple) -> bool:
        r = self._range(doc, f)
        a = (r["start"]["line"], r["start"]["character"])
        b = (r["end"]["line"], r["end"]["character"])
        return a <= end and start <= b

    @staticmethod
    def _fix_title(f) -> str:
        what = f"`{f.replacement}`" if f.replacement else "the replacement"
        if f.fix == "unsafe":
            return (f"anydev: fix {f.rule} with {what} (unsafe: changes behaviour; "
                    f"see `anydev rule {f.rule}`)")
        return f"anydev: fix {f.rule} with {what}"

    def _fix_action(self, got: _Checked, findings: list, *, unsafe: bool, title: str,
                    diag: Optional[dict] = None, kind: str = "quickfix") -> Optional[dict]:
        """A code action of what ``anydev fix`` writes for ``findings`` (None
        when it rewrites none of them)."""
        data = got.checked.data
        try:
            new, applied, _skipped = _check.fix(data, got.path, findings, got.settings,
                                                unsafe=unsafe, language=got.checked.language)
        except ValueError:
            return None
        if not applied or new == data:
            return None
        edit = self._workspace_edit(got, data, new)
        if edit is None:
            return None
        act = {"title": title, "kind": kind, "edit": edit}
        if diag is not None:
            act["diagnostics"] = [diag]
            act["isPreferred"] = not unsafe
        return act

    def _workspace_edit(self, got: _Checked, old: bytes, new: bytes) -> Optional[dict]:
        if got.cells is None:
            uri = got.uri
            doc = self.docs[uri]
            edits = _text_edits(doc, old.decode("utf-8", "surrogatepass"),
                                new.decode("utf-8", "surrogatepass"), self.encoding)
            return {"changes": {uri: edits}}
        try:
            nb_new = _notebook.Notebook.parse(new)
            nb_old = _notebook.Notebook.parse(old)
        except _notebook.NotebookError:
            return None
        changes: dict = {}
        olds = {c.number: c.text for c in nb_old.cells}
        for c in nb_new.cells:
            if olds.get(c.number) != c.text:
                uri = got.cells.get(c.number)
                doc = self.docs.get(uri)
                if doc is None:
                    return None
                changes[uri] = _text_edits(doc, doc.text, c.text, self.encoding)
        return {"changes": changes} if changes else None

    def _noqa_action(self, got: _Checked, doc: TextDocument, f, diag: dict) -> Optional[dict]:
        """``# noqa: ADxxx`` (``// anydev: ignore[ADxxx]`` in C++) at the end of
        the finding's first line, offered when a check of the result no longer
        reports the finding."""
        line = doc.lines[f.line - 1] if f.line - 1 < len(doc.lines) else None
        if line is None:
            return None
        body = line.rstrip("\r\n")
        if f.language == "cpp":
            if body.endswith("\\"):
                return None  # a macro's line: a // comment would end it
            import re

            m = re.search(r"//\s*anydev:\s*ignore\[([^\]]*)\]\s*$", body)
            new_body = (body[:m.start(1)] + m.group(1).rstrip() + f", {f.rule}" + body[m.end(1):]
                        if m else f"{body}  // anydev: ignore[{f.rule}]")
        else:
            import re

            m = re.search(r"#\s*noqa:\s*([A-Za-z]+[0-9]+(?:[,\s]+[A-Za-z]+[0-9]+)*)\s*$", body)
            new_body = (body[:m.end(1)] + f", {f.rule}" + body[m.end(1):]
                        if m else f"{body}  # noqa: {f.rule}")
        new_line = new_body + line[len(body):]
        lines = list(doc.lines)
        lines[f.line - 1] = new_line
        new_text = "".join(lines)
        # the suppression must work (a line that opens a string would hold it)
        if got.cells is None:
            data = new_text.encode("utf-8", "surrogatepass")
        else:
            data = self._notebook_with(got, doc.uri, new_text)
        try:
            again = _check.check_source(data, got.path, got.settings,
                                        language=got.checked.language)
        except ValueError:
            return None
        if any(g.rule == f.rule and g.line == f.line and g.column == f.column and
               getattr(g, "cell", None) == getattr(f, "cell", None) for g in again.findings):
            return None
        enc = self.encoding
        k = f.line - 1
        edit = {"range": {"start": {"line": k, "character": enc.character(line, len(body))},
                          "end": {"line": k, "character": enc.character(line, len(body))}},
                "newText": new_body[len(body):]}
        return {"title": f"anydev: suppress {f.rule} with "
                         f"{'// anydev: ignore' if f.language == 'cpp' else '# noqa'}",
                "kind": "quickfix", "diagnostics": [diag],
                "edit": {"changes": {doc.uri: [edit]}}}

    def _notebook_with(self, got: _Checked, cell_uri: str, text: str) -> bytes:
        nb = self.notebooks[self.cell_owner[cell_uri]]
        doc = self.docs[cell_uri]
        saved = doc.text
        doc.set_text(text)
        try:
            data, _cells = self._notebook_bytes(nb)
        finally:
            doc.set_text(saved)
        return data

    # --- hover --------------------------------------------------------------------

    def hover(self, params: dict) -> Optional[dict]:
        uri = _dict(params.get("textDocument")).get("uri")
        doc = self.docs.get(uri)
        if doc is None:
            raise _ParamsError(f"{uri!r} is not open")
        try:
            from .documents import _position

            pos = _position({"p": params.get("position")}, "p")
        except ChangeError as e:
            raise _ParamsError(str(e)) from None
        owner = self.cell_owner.get(uri)
        got = self._check(owner or uri)
        if got is None or got.checked is None:
            return None
        findings = got.checked.findings
        if owner is not None:
            cell = next((n for n, u in got.cells.items() if u == uri), None)
            findings = [f for f in findings if f.cell == cell]
        for f in findings:
            if self._overlaps(doc, f, pos, pos):
                row = _row(f.rule)
                if row is None:
                    return None
                from anydev._migrate import rules as _rules

                text = _rules.explain(row, versions=True)
                value = (f"```text\n{text}```\n[{f.rule}]({_rules.rule_url(f.rule)})"
                         if self.hover_markdown else text)
                return {"contents": {"kind": "markdown" if self.hover_markdown else "plaintext",
                                     "value": value},
                        "range": self._range(doc, f)}
        return None

    REQUESTS: dict = {}
    NOTIFICATIONS: dict = {}


Server.REQUESTS = {
    "initialize": Server.initialize,
    "shutdown": Server.shutdown,
    "textDocument/codeAction": Server.code_action,
    "textDocument/hover": Server.hover,
}
Server.NOTIFICATIONS = {
    "initialized": Server.initialized_,
    "exit": Server.exit_,
    "textDocument/didOpen": Server.did_open,
    "textDocument/didChange": Server.did_change,
    "textDocument/didSave": Server.did_save,
    "textDocument/didClose": Server.did_close,
    "notebookDocument/didOpen": Server.nb_did_open,
    "notebookDocument/didChange": Server.nb_did_change,
    "notebookDocument/didSave": Server.nb_did_save,
    "notebookDocument/didClose": Server.nb_did_close,
    "workspace/didChangeWatchedFiles": Server.did_change_watched_files,
    "workspace/didChangeConfiguration": Server.did_change_configuration,
}


class _ParamsError(ValueError):
    """A message's params are not what its method takes (InvalidParams)."""


class _ConfigProblem(Exception):
    """The configuration of a file is invalid (shown as a diagnostic)."""


def _dict(v: Any) -> dict:
    return v if isinstance(v, dict) else {}


def _int(v: Any, default: int = 0) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else default


_ROWS: dict = {}


def _row(code: str):
    if not _ROWS:
        from anydev._compat import table as _table

        _ROWS.update(_table.ROWS_BY_CODE)
    return _ROWS.get(code)


def _target_refusal(row, got: _Checked) -> Optional[str]:
    """Why the target torch forbids the row's rewrite in the file, or None."""
    from anydev._migrate import torch_versions as _versions

    return _versions.needs(row, got.target())


def _text_edits(doc: TextDocument, old: str, new: str, enc: Encoding) -> list:
    """The TextEdits that turn ``old`` (the document's text) into ``new``:
    one per changed run of lines."""
    from difflib import SequenceMatcher

    from .documents import split_lines

    a, b = split_lines(old), split_lines(new)
    lo = 0
    while lo < len(a) and lo < len(b) and a[lo] == b[lo]:
        lo += 1
    hi = 0
    while hi < len(a) - lo and hi < len(b) - lo and a[-1 - hi] == b[-1 - hi]:
        hi += 1
    sm = SequenceMatcher(None, a[lo:len(a) - hi], b[lo:len(b) - hi], autojunk=False)
    edits = []
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            continue
        start = {"line": lo + i1, "character": 0}
        end = {"line": lo + i2, "character": 0}
        if lo + i2 >= len(a):  # to the end of the text
            end = {"line": len(a) - 1, "character": enc.character(a[-1], len(a[-1]))}
        edits.append({"range": {"start": start, "end": end},
                      "newText": "".join(b[lo + j1:lo + j2])})
    return edits


def serve(*, config: Optional[str] = None, client_pid: Optional[int] = None,
          stdin=None, stdout=None, exit_process: bool = False,
          diff_base: Optional[str] = None) -> int:
    """Runs the server on stdin/stdout (binary) until it is told to exit;
    returns the exit status (0 after shutdown, else 1), or with
    ``exit_process`` ends the process with it."""
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    # what is printed by accident must not corrupt the protocol's stream
    real_stdout = sys.stdout
    sys.stdout = sys.stderr
    try:
        server = Server(rpc.Reader(stdin), rpc.Writer(stdout), config=config,
                        client_pid=client_pid, diff_base=diff_base)
        code = server.run()
    finally:
        sys.stdout = real_stdout
    if exit_process:
        # The reader thread may be blocked in a read of stdin, whose lock
        # Python's shutdown would then wait for ("could not acquire lock for
        # <stdin> at interpreter shutdown", a fatal error): the answers are
        # flushed and the process ends here.
        for stream in (stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)
    return code
