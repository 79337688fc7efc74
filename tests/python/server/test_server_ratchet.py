"""The ratchet in the editor (issue 32; Note [The ratchet in the editor] in
anydev/_server/server.py): `anydev server --diff-base REV` dims the findings
on lines older than the merge base of REV and HEAD and shows the ones the
buffer adds or changes, as `anydev scan --diff-base REV` reports them; on a
real git repository, driven by a real LSP client (pytest-lsp)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

pytest_lsp = pytest.importorskip("pytest_lsp")  # tools/requirements-dev.txt installs it

from lsprotocol import types as t  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402

from conftest import clean_env  # noqa: E402

if shutil.which("git") is None:  # pragma: no cover
    pytest.skip("git is not installed", allow_module_level=True)

OLD = "import torch\n\n\ndef step():\n    torch.cuda.synchronize()\n    return 1\n"


def git(cwd, *args: str) -> None:
    env = clean_env({"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
                     "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
                     "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"})
    p = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, (args, p.stderr)


def repository(root) -> None:
    git(root, "init", "-q", "-b", "main")
    (root / "requirements.txt").write_text("torch>=2.13\n")
    (root / "train.py").write_text(OLD)
    (root / "moved_from.py").write_text("import torch\nx = torch.cuda.device_count()\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "legacy code")
    git(root, "mv", "moved_from.py", "moved_to.py")
    git(root, "commit", "-qm", "a rename")


SERVER = [sys.executable, "-m", "anydev", "server", "--diff-base", "HEAD~1"]


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def client(lsp_client: LanguageClient, tmp_path):
    repository(tmp_path)
    await lsp_client.initialize_session(t.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        workspace_folders=[t.WorkspaceFolder(uri=tmp_path.as_uri(), name="project")]))
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "anydev",
                                                              "server"]))
async def hiding(lsp_client: LanguageClient, tmp_path):
    repository(tmp_path)
    await lsp_client.initialize_session(t.InitializeParams(
        capabilities=client_capabilities("neovim"), root_uri=tmp_path.as_uri(),
        initialization_options={"diffBase": "HEAD", "oldFindings": "hide"}))
    yield
    await lsp_client.shutdown_session()


async def opened(client: LanguageClient, path, text: str) -> list:
    uri = path.as_uri()
    client.text_document_did_open(t.DidOpenTextDocumentParams(
        text_document=t.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
    await client.wait_for_notification("textDocument/publishDiagnostics")
    return list(client.diagnostics[uri])


async def typed(client: LanguageClient, path, version: int, line: int, text: str) -> list:
    uri = path.as_uri()
    at = t.Position(line=line, character=0)
    client.text_document_did_change(t.DidChangeTextDocumentParams(
        text_document=t.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[t.TextDocumentContentChangePartial(range=t.Range(start=at, end=at),
                                                            text=text)]))
    await client.wait_for_notification("textDocument/publishDiagnostics")
    return list(client.diagnostics[uri])


def shown(diags: list) -> list:
    return [(d.code, d.range.start.line + 1, d.severity) for d in diags]


WARN, HINT = t.DiagnosticSeverity.Warning, t.DiagnosticSeverity.Hint


@pytest.mark.asyncio
async def test_old_lines_are_dimmed_and_what_the_buffer_adds_stands_out(client, tmp_path):
    path = tmp_path / "train.py"
    diags = await opened(client, path, OLD)
    assert shown(diags) == [("AD107", 5, HINT)]
    assert diags[0].message.endswith("(on a line older than HEAD~1)")
    # typed, not saved: the buffer's new line is new, the old one stays dim
    diags = await typed(client, path, 2, 5, "    torch.cuda.empty_cache()\n")
    assert shown(diags) == [("AD107", 5, HINT), ("AD201", 6, WARN)]
    # the old line changed: it is new too
    diags = await typed(client, path, 3, 4, "    x = 1; ")
    assert shown(diags) == [("AD107", 5, WARN), ("AD201", 6, WARN)]
    # a file renamed since the base keeps its old lines old; a new file is new throughout
    diags = await opened(client, tmp_path / "moved_to.py", "import torch\n"
                                                           "x = torch.cuda.device_count()\n")
    assert shown(diags) == [("AD102", 2, HINT)]
    diags = await opened(client, tmp_path / "fresh.py", "import torch\n"
                                                        "x = torch.cuda.device_count()\n")
    assert shown(diags) == [("AD102", 2, WARN)]


@pytest.mark.asyncio
async def test_hidden_old_findings_and_a_file_outside_any_repository(hiding, tmp_path,
                                                                     tmp_path_factory):
    client = hiding
    path = tmp_path / "train.py"
    assert await opened(client, path, OLD) == []
    diags = await typed(client, path, 2, 5, "    torch.cuda.empty_cache()\n")
    assert shown(diags) == [("AD201", 6, WARN)]
    # outside a git work tree there is no base: every finding is shown
    elsewhere = tmp_path_factory.mktemp("plain") / "m.py"
    diags = await opened(client, elsewhere, OLD)
    assert shown(diags) == [("AD107", 5, WARN)]
