"""`anydev server` driven by a real LSP client over stdio: pytest-lsp's
(pygls and lsprotocol, which check every message against the LSP 3.17
types), with the capabilities VS Code and Neovim send. What the server
reports and rewrites is compared with what `anydev scan` and `anydev fix`
do to the same file on disk."""

from __future__ import annotations

import json
import sys

import pytest

pytest_lsp = pytest.importorskip("pytest_lsp")  # tools/requirements-dev.txt installs it

from lsprotocol import types as t  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402

from conftest import run_cli  # noqa: E402

SERVER = [sys.executable, "-m", "anydev", "server"]
LEGACY = "import torch\nd = torch.cuda.current_device()\ntorch.cuda.empty_cache()\n"


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def client(lsp_client: LanguageClient, tmp_path):
    # the project declares its torch: the fixer's target, as `anydev fix` reads it
    (tmp_path / "requirements.txt").write_text("torch>=2.13\n")
    await lsp_client.initialize_session(t.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        workspace_folders=[t.WorkspaceFolder(uri=tmp_path.as_uri(), name="project")]))
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def nvim(lsp_client: LanguageClient, tmp_path):
    (tmp_path / "requirements.txt").write_text("torch>=2.13\n")
    await lsp_client.initialize_session(t.InitializeParams(
        capabilities=client_capabilities("neovim"), root_uri=tmp_path.as_uri()))
    yield
    await lsp_client.shutdown_session()


async def opened(client: LanguageClient, path, text: str, language: str = "python") -> list:
    """Opens ``path`` with ``text`` (not saved) and waits for its diagnostics."""
    uri = path.as_uri()
    client.text_document_did_open(t.DidOpenTextDocumentParams(
        text_document=t.TextDocumentItem(uri=uri, language_id=language, version=1, text=text)))
    await client.wait_for_notification("textDocument/publishDiagnostics")
    return list(client.diagnostics[uri])


async def changed(client: LanguageClient, path, version: int, *changes) -> list:
    uri = path.as_uri()
    client.text_document_did_change(t.DidChangeTextDocumentParams(
        text_document=t.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=list(changes)))
    await client.wait_for_notification("textDocument/publishDiagnostics")
    return list(client.diagnostics[uri])


async def until(cond, timeout: float = 30) -> None:
    """Waits until ``cond()`` holds (diagnostics of several documents come in
    one burst: waiting for one notification at a time could miss the next)."""
    import asyncio
    import time

    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, "timed out"
        await asyncio.sleep(0.01)


def rng(l1: int, c1: int, l2: int, c2: int) -> t.Range:
    return t.Range(start=t.Position(line=l1, character=c1), end=t.Position(line=l2, character=c2))


def cli_findings(tmp_path, name: str, text: str, *args: str) -> list:
    """What `anydev scan` reports for ``text`` saved as ``name``: (rule, line, column)."""
    (tmp_path / name).write_text(text)
    import os

    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        _rc, out, _err = run_cli("scan", name, "--format", "json", *args)
    finally:
        os.chdir(cwd)
    return [(f["rule"], f["line"], f["column"]) for f in json.loads(out)["findings"]]


def lsp_findings(diags: list) -> list:
    """Diagnostics as (rule, 1-based line, 1-based column) for ASCII text."""
    return [(d.code, d.range.start.line + 1, d.range.start.character + 1) for d in diags]


def apply_edits(text: str, edits: list) -> str:
    """``text`` with the TextEdits applied (UTF-16 positions, as VS Code's)."""
    lines = text.splitlines(keepends=True) + [""]

    def offset(p: t.Position) -> int:
        line = lines[p.line] if p.line < len(lines) else ""
        units = 0
        for i, ch in enumerate(line):
            if units >= p.character:
                return sum(len(x) for x in lines[:p.line]) + i
            units += 2 if ord(ch) > 0xFFFF else 1
        return sum(len(x) for x in lines[:p.line]) + len(line.rstrip("\r\n"))

    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character),
                    reverse=True):
        a, b = offset(e.range.start), offset(e.range.end)
        text = text[:a] + e.new_text + text[b:]
    return text


def cli_fixed(tmp_path, name: str, text: str, *args: str) -> str:
    """What `anydev fix` writes for ``text`` saved as ``name``."""
    import os

    (tmp_path / name).write_text(text)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        run_cli("fix", name, *args)
    finally:
        os.chdir(cwd)
    return (tmp_path / name).read_text()


@pytest.mark.asyncio
async def test_diagnostics_as_the_user_types(client: LanguageClient, tmp_path):
    path = tmp_path / "train.py"
    diags = await opened(client, path, LEGACY)
    assert lsp_findings(diags) == [("AD103", 2, 5), ("AD201", 3, 1)] == \
        cli_findings(tmp_path, "other.py", LEGACY)
    d = diags[0]
    assert d.source == "anydev" and d.severity == t.DiagnosticSeverity.Warning
    assert d.code_description.href.endswith("/docs/migration-guide.md#ad103")
    # device-specific, not deprecated by PyTorch: not struck through
    assert not d.tags
    assert d.message == ("`torch.cuda.current_device` is device-specific; use "
                         "`torch.accelerator.current_device_index` (torch >= 2.7) (safe fix)")
    assert diags[1].message.endswith("(unsafe fix)")
    assert d.range == rng(1, 4, 1, 29)
    # incremental: a new line typed above, then a call removed
    diags = await changed(client, path, 2, t.TextDocumentContentChangePartial(
        range=rng(1, 0, 1, 0), text="torch.cuda.synchronize()\n"))
    assert lsp_findings(diags) == [("AD107", 2, 1), ("AD103", 3, 5), ("AD201", 4, 1)]
    diags = await changed(client, path, 3, t.TextDocumentContentChangePartial(
        range=rng(2, 4, 2, 31), text="0"))
    assert lsp_findings(diags) == [("AD107", 2, 1), ("AD201", 4, 1)]
    # a whole text (full sync)
    diags = await changed(client, path, 4, t.TextDocumentContentChangeWholeDocument(
        text="import torch\n"))
    assert diags == []


@pytest.mark.asyncio
async def test_only_what_pytorch_deprecates_is_struck_through(client: LanguageClient, tmp_path):
    diags = await opened(client, tmp_path / "m.py",
                         "import torch\nx = torch.cuda.memory_cached()\n"
                         "y = torch.cuda.memory_reserved()\n")
    assert lsp_findings(diags)[0][0] == "AD211" and len(diags) == 2
    assert list(diags[0].tags) == [t.DiagnosticTag.Deprecated]
    assert diags[0].message.startswith("`torch.cuda.memory_cached` is deprecated")
    assert not diags[1].tags and "is device-specific" in diags[1].message


@pytest.mark.asyncio
async def test_cpp_and_cuda_files(client: LanguageClient, tmp_path):
    text = "#include <c10/cuda/CUDAFunctions.h>\nint d = c10::cuda::current_device();\n"
    diags = await opened(client, tmp_path / "k.cu", text, "cuda-cpp")
    assert lsp_findings(diags) == cli_findings(tmp_path, "other.cu", text) != []


@pytest.mark.asyncio
async def test_the_projects_configuration_noqa_and_baseline(client: LanguageClient, tmp_path):
    text = LEGACY + "torch.cuda.synchronize()  # noqa: AD107\nx = torch.cuda.is_available()\n"
    (tmp_path / "pyproject.toml").write_text(
        '[tool.anydev]\nignore = ["AD201"]\nbaseline = "base.json"\n'
        'per-file-ignores = { "gen/**" = ["AD1"] }\n')
    (tmp_path / "old.py").write_text(text)
    import os

    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert run_cli("scan", "old.py", "--write-baseline", "base.json")[0] == 0
    finally:
        os.chdir(cwd)
    # every finding of the file as saved is in the baseline; one typed now is not
    assert await opened(client, tmp_path / "old.py", text) == []
    new = text + "torch.cuda.device_count()\n"
    diags = await changed(client, tmp_path / "old.py", 2,
                          t.TextDocumentContentChangeWholeDocument(text=new))
    assert lsp_findings(diags) == [("AD102", 6, 1)]
    # the baseline rewritten on disk is read again
    (tmp_path / "old.py").write_text(new)
    os.chdir(tmp_path)
    try:
        assert run_cli("scan", "old.py", "--write-baseline", "base.json")[0] == 0
    finally:
        os.chdir(cwd)
    assert await changed(client, tmp_path / "old.py", 3,
                         t.TextDocumentContentChangeWholeDocument(text=new)) == []
    (tmp_path / "gen").mkdir()
    assert await opened(client, tmp_path / "gen" / "g.py", text) == []
    # the configuration changed on disk: read again
    (tmp_path / "pyproject.toml").write_text('[tool.anydev]\nselect = ["AD201"]\n')
    client.workspace_did_change_watched_files(t.DidChangeWatchedFilesParams(changes=[
        t.FileEvent(uri=(tmp_path / "pyproject.toml").as_uri(), type=t.FileChangeType.Changed)]))
    await client.wait_for_notification("textDocument/publishDiagnostics")
    assert lsp_findings(client.diagnostics[(tmp_path / "old.py").as_uri()]) == [("AD201", 3, 1)]


@pytest.mark.asyncio
async def test_a_bad_configuration_is_a_diagnostic(client: LanguageClient, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.anydev]\nselect = ["XX9"]\n')
    (d,) = await opened(client, tmp_path / "a.py", LEGACY)
    assert d.severity == t.DiagnosticSeverity.Error
    assert "configuration error" in d.message and "XX9" in d.message


async def actions(client: LanguageClient, path, line: int, only=None) -> list:
    uri = path.as_uri()
    got = await client.text_document_code_action_async(t.CodeActionParams(
        text_document=t.TextDocumentIdentifier(uri=uri), range=rng(line, 6, line, 6),
        context=t.CodeActionContext(diagnostics=[], only=only)))
    return got or []


@pytest.mark.asyncio
async def test_code_actions_write_what_anydev_fix_writes(client: LanguageClient, tmp_path):
    path = tmp_path / "train.py"
    text = LEGACY + "torch.cuda.synchronize()\n"
    await opened(client, path, text)
    uri = path.as_uri()
    got = await actions(client, path, 1)
    titles = [a.title for a in got]
    assert titles == ["anydev: fix AD103 with `torch.accelerator.current_device_index`",
                      "anydev: suppress AD103 with # noqa",
                      "anydev: fix all safe fixes in this file"]
    one, noqa, every = got
    assert one.kind == "quickfix" and one.is_preferred and one.diagnostics[0].code == "AD103"
    # one finding's fix: `anydev fix` on the file with only that finding selected
    assert apply_edits(text, one.edit.changes[uri]) == \
        cli_fixed(tmp_path, "a.py", text, "--select", "AD103")
    # all safe fixes: `anydev fix` on the file
    assert apply_edits(text, every.edit.changes[uri]) == cli_fixed(tmp_path, "b.py", text)
    suppressed = apply_edits(text, noqa.edit.changes[uri])
    assert suppressed.splitlines()[1] == "d = torch.cuda.current_device()  # noqa: AD103"
    assert lsp_findings(await changed(client, path, 2, t.TextDocumentContentChangeWholeDocument(
        text=suppressed))) == [("AD201", 3, 1), ("AD107", 4, 1)]
    # the unsafe fix, labelled so, writes what --unsafe-fixes writes for it
    (unsafe, noqa2, _all) = await actions(client, path, 2)
    assert "unsafe" in unsafe.title and not unsafe.is_preferred
    assert apply_edits(suppressed, unsafe.edit.changes[uri]) == \
        cli_fixed(tmp_path, "c.py", suppressed, "--unsafe-fixes", "--select", "AD201")
    assert noqa2.title == "anydev: suppress AD201 with # noqa"
    # a source action asked for by kind (VS Code's "Fix All" on save)
    (fix_all,) = await actions(client, path, 0, only=[t.CodeActionKind.SourceFixAll])
    assert fix_all.kind == "source.fixAll.anydev"
    assert apply_edits(suppressed, fix_all.edit.changes[uri]) == \
        cli_fixed(tmp_path, "d.py", suppressed)


@pytest.mark.asyncio
async def test_the_target_torch_is_honoured(client: LanguageClient, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.anydev]\ntarget-torch = "2.0"\n')
    path = tmp_path / "a.py"
    (d, _u) = await opened(client, path, LEGACY)
    assert d.message.endswith("(safe fix; not applied: needs torch >= 2.7 (target 2.0))")
    assert [a.title for a in await actions(client, path, 1)] == \
        ["anydev: suppress AD103 with # noqa"]
    assert cli_fixed(tmp_path, "b.py", LEGACY) == LEGACY


@pytest.mark.asyncio
async def test_hover_explains_the_rule(client: LanguageClient, tmp_path):
    path = tmp_path / "a.py"
    await opened(client, path, LEGACY)
    hover = await client.text_document_hover_async(t.HoverParams(
        text_document=t.TextDocumentIdentifier(uri=path.as_uri()),
        position=t.Position(line=1, character=10)))
    from anydev._compat.table import ROWS_BY_CODE
    from anydev._migrate.rules import explain

    assert hover.contents.kind == t.MarkupKind.Markdown
    assert explain(ROWS_BY_CODE["AD103"], versions=True) in hover.contents.value
    assert hover.range == rng(1, 4, 1, 29)
    none = await client.text_document_hover_async(t.HoverParams(
        text_document=t.TextDocumentIdentifier(uri=path.as_uri()),
        position=t.Position(line=0, character=3)))
    assert none is None


@pytest.mark.asyncio
async def test_positions_in_the_clients_encoding(nvim: LanguageClient, tmp_path):
    text = 'import torch\ns = "é😀"; torch.cuda.synchronize()\n'
    enc = nvim.protocol.position_encoding if hasattr(nvim.protocol, "position_encoding") \
        else None
    (d,) = await opened(nvim, tmp_path / "a.py", text)
    # Neovim offers utf-8 first: the column counts bytes (é 2, 😀 4)
    assert enc in (None, t.PositionEncodingKind.Utf8)
    assert d.range.start == t.Position(line=1, character=len('s = "é😀"; '.encode()))


@pytest.mark.asyncio
async def test_utf16_positions_of_vs_code(client: LanguageClient, tmp_path):
    text = 'import torch\ns = "é😀"; torch.cuda.synchronize()\n'
    path = tmp_path / "a.py"
    (d,) = await opened(client, path, text)
    assert d.range.start == t.Position(line=1, character=11)  # 😀 is two UTF-16 units
    diags = await changed(client, path, 2, t.TextDocumentContentChangePartial(
        range=rng(1, 5, 1, 8), text="x"))  # "é😀" -> "x"
    assert diags[0].range.start == t.Position(line=1, character=9)


def notebook_cells(tmp_path):
    nb_uri = (tmp_path / "demo.ipynb").as_uri()
    cells = ["import torch.cuda as tc\n%matplotlib inline",
             "# Notes: `torch.cuda.synchronize()`",
             "x = tc.current_device()\n!nvidia-smi\ntc.synchronize()"]
    uris = [f"vscode-notebook-cell:{tmp_path / 'demo.ipynb'}#C{k}" for k in range(3)]
    kinds = [t.NotebookCellKind.Code, t.NotebookCellKind.Markup, t.NotebookCellKind.Code]
    langs = ["python", "markdown", "python"]
    return nb_uri, cells, uris, kinds, langs


@pytest.mark.asyncio
async def test_notebook_cells(client: LanguageClient, tmp_path):
    nb_uri, cells, uris, kinds, langs = notebook_cells(tmp_path)
    client.notebook_document_did_open(t.DidOpenNotebookDocumentParams(
        notebook_document=t.NotebookDocument(
            uri=nb_uri, notebook_type="jupyter-notebook", version=1,
            cells=[t.NotebookCell(kind=k, document=u) for k, u in zip(kinds, uris)]),
        cell_text_documents=[t.TextDocumentItem(uri=u, language_id=lang, version=1, text=c)
                             for u, lang, c in zip(uris, langs, cells)]))
    await until(lambda: all(u in client.diagnostics for u in uris))
    assert lsp_findings(client.diagnostics[uris[2]]) == [("AD103", 1, 5), ("AD107", 3, 1)]
    assert list(client.diagnostics[uris[0]]) == [] == list(client.diagnostics[uris[1]])
    # the same notebook as a file: `anydev scan` reports the same cells and lines
    doc = {"cells": [{"cell_type": "code" if k == 2 else "markdown", "metadata": {},
                      "source": c, **({"outputs": [], "execution_count": None}
                                      if k == 2 else {})}
                     for k, c in zip(kinds, cells)],
           "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "same.ipynb").write_text(json.dumps(doc, indent=1))
    import os

    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        out = json.loads(run_cli("scan", "same.ipynb", "--format", "json")[1])
    finally:
        os.chdir(cwd)
    assert [(f["cell"], f["rule"], f["line"], f["column"]) for f in out["findings"]] == \
        [(3, "AD103", 1, 5), (3, "AD107", 3, 1)]
    # typing in a cell
    client.notebook_document_did_change(t.DidChangeNotebookDocumentParams(
        notebook_document=t.VersionedNotebookDocumentIdentifier(uri=nb_uri, version=2),
        change=t.NotebookDocumentChangeEvent(cells=t.NotebookDocumentCellChanges(
            text_content=[t.NotebookDocumentCellContentChanges(
                document=t.VersionedTextDocumentIdentifier(uri=uris[2], version=2),
                changes=[t.TextDocumentContentChangePartial(range=rng(2, 0, 2, 16),
                                                            text="pass")])]))))
    await until(lambda: lsp_findings(client.diagnostics[uris[2]]) == [("AD103", 1, 5)])
    # fix all: the cells as `anydev fix` writes them into the file
    got = await client.text_document_code_action_async(t.CodeActionParams(
        text_document=t.TextDocumentIdentifier(uri=uris[2]), range=rng(0, 6, 0, 6),
        context=t.CodeActionContext(diagnostics=[])))
    fix_all = [a for a in got if a.title == "anydev: fix all safe fixes in this file"][0]
    new_cell = apply_edits("x = tc.current_device()\n!nvidia-smi\npass",
                           fix_all.edit.changes[uris[2]])
    doc["cells"][2]["source"] = "x = tc.current_device()\n!nvidia-smi\npass"
    (tmp_path / "same.ipynb").write_text(json.dumps(doc, indent=1))
    os.chdir(tmp_path)
    try:
        run_cli("fix", "same.ipynb")
    finally:
        os.chdir(cwd)
    fixed = json.loads((tmp_path / "same.ipynb").read_text())["cells"]
    assert new_cell == fixed[2]["source"] == \
        "x = torch.accelerator.current_device_index()\n!nvidia-smi\npass"
    assert apply_edits(cells[0], fix_all.edit.changes[uris[0]]) == fixed[0]["source"]
    # a cell removed: its diagnostics are cleared
    client.notebook_document_did_change(t.DidChangeNotebookDocumentParams(
        notebook_document=t.VersionedNotebookDocumentIdentifier(uri=nb_uri, version=3),
        change=t.NotebookDocumentChangeEvent(cells=t.NotebookDocumentCellChanges(
            structure=t.NotebookDocumentCellChangeStructure(
                array=t.NotebookCellArrayChange(start=2, delete_count=1),
                did_close=[t.TextDocumentIdentifier(uri=uris[2])])))))
    await until(lambda: list(client.diagnostics[uris[2]]) == [])
