"""`anydev server` stays up on any input and exits when it should: garbage
JSON-RPC, changes that are not changes, a file that does not parse, a binary
file, a 50 MB file; exit after shutdown/exit, at the end of its input, and
when its client's process dies. Driven over stdio by a bare client that
writes raw bytes (lsp_raw.py)."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from lsp_raw import RawClient

PY = "import torch\nd = torch.cuda.current_device()\n"


@pytest.fixture
def server(tmp_path):
    c = RawClient(cwd=str(tmp_path))
    yield c
    if c.proc.poll() is None:
        c.proc.kill()
        c.proc.wait()


def alive(c: RawClient, uri: str) -> None:
    """The server still answers: a hover on a document it has open."""
    got = c.request("textDocument/hover", {"textDocument": {"uri": uri},
                                           "position": {"line": 1, "character": 6}})
    assert "result" in got and got["result"]["contents"]["value"].count("AD103") >= 1


def test_garbage_is_answered_and_the_server_goes_on(server, tmp_path):
    uri = (tmp_path / "a.py").as_uri()
    # before initialize: refused with ServerNotInitialized
    assert server.request("textDocument/hover", {})["error"]["code"] == -32002
    server.initialize()
    server.open(uri, PY)
    assert [d["code"] for d in server.diagnostics(uri)] == ["AD103"]
    errors = []

    def error() -> dict:
        m = server.wait(lambda m: "error" in m and m.get("id") is None)
        errors.append(m["error"]["code"])
        return m

    server.raw(b"this is not a header\r\n\r\n")
    error()
    server.raw(b"Content-Length: 7\r\n\r\n{oops!}")
    error()
    server.raw(b"Content-Length: 2\r\n\r\n\xff\xfe")
    error()
    server.raw(b"Content-Length: 5\r\n\r\n[1,2]")
    error()
    server.raw(b"Content-Length: nine\r\n\r\n")
    error()
    server.send({"jsonrpc": "2.0", "id": [1], "method": "x"})
    error()
    server.send({"jsonrpc": "1.0", "method": "x"})
    error()
    server.send({"jsonrpc": "2.0", "id": 7, "method": 42})
    assert server.wait(lambda m: m.get("id") == 7)["error"]["code"] == -32600
    assert errors == [-32700, -32700, -32700, -32600, -32700, -32600, -32600]
    # an unknown request; bad params; a change that is not one; unknown notifications
    assert server.request("no/such", {})["error"]["code"] == -32601
    assert server.request("textDocument/hover", {"textDocument": 3})["error"]["code"] == -32602
    server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                             "contentChanges": [{"range": {
                                                 "start": {"line": 5, "character": 0},
                                                 "end": {"line": 1, "character": 0}},
                                                 "text": "x"}]})
    log = server.wait(lambda m: m.get("method") == "window/logMessage")
    assert "ends (1:0) before it starts (5:0)" in log["params"]["message"]
    server.notify("$/setTrace", {"value": "off"})
    server.notify("textDocument/didOpen", {"textDocument": None})
    alive(server, uri)
    assert server.request("shutdown")["result"] is None
    server.notify("exit")
    assert server.stop() == 0


def test_files_that_cannot_be_scanned_are_reported_not_fatal(server, tmp_path):
    server.initialize()
    # a file that does not parse: what the lexer reads before the error is reported,
    # and code actions answer (no fix for a file that does not parse)
    bad = (tmp_path / "bad.py").as_uri()
    server.open(bad, PY + "def f(:\n    s = 'unterminated\n")
    diags = server.diagnostics(bad)
    assert [d.get("code") for d in diags] == ["AD103", None]
    assert "unterminated string" in diags[1]["message"] and diags[1]["severity"] == 1
    got = server.request("textDocument/codeAction", {
        "textDocument": {"uri": bad}, "range": {"start": {"line": 1, "character": 6},
                                                "end": {"line": 1, "character": 6}},
        "context": {"diagnostics": []}})
    assert [a["title"] for a in got["result"]] == ["anydev: suppress AD103 with # noqa"]
    # a binary file
    binary = (tmp_path / "blob.py").as_uri()
    server.open(binary, "import torch\x00\x01\x02torch.cuda.synchronize()\n")
    (d,) = server.diagnostics(binary)
    assert "binary" in d["message"]
    # a 50 MB file: over the size limit, said once, and the server goes on at once
    big = (tmp_path / "big.py").as_uri()
    text = PY + ("x = 1\n" * (50 * 1024 * 1024 // 6))
    t0 = time.monotonic()
    server.open(big, text)
    (d,) = server.diagnostics(big, timeout=120)
    assert "over the limit" in d["message"]
    server.notify("textDocument/didChange", {
        "textDocument": {"uri": big, "version": 2},
        "contentChanges": [{"range": {"start": {"line": 0, "character": 0},
                                      "end": {"line": 0, "character": 0}}, "text": "# hi\n"}]})
    (d,) = server.diagnostics(big, timeout=120)
    assert "over the limit" in d["message"]
    assert time.monotonic() - t0 < 60
    ok = (tmp_path / "ok.py").as_uri()
    server.open(ok, PY)
    assert [d["code"] for d in server.diagnostics(ok)] == ["AD103"]
    alive(server, ok)


def test_exit_without_shutdown_is_status_1(server):
    server.initialize()
    server.notify("exit")
    assert server.stop() == 1


def test_the_end_of_its_input_ends_it(server):
    server.initialize()
    server.proc.stdin.close()
    assert server.stop() == 1


def test_requests_after_shutdown_are_refused(server):
    server.initialize()
    assert server.request("shutdown")["result"] is None
    assert server.request("textDocument/hover", {})["error"]["code"] == -32600
    server.notify("exit")
    assert server.stop() == 0


@pytest.mark.parametrize("how", ["--clientProcessId", "processId"])
def test_it_exits_when_its_clients_process_dies(tmp_path, how):
    parent = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        args = ("--clientProcessId", str(parent.pid)) if how == "--clientProcessId" else ()
        c = RawClient(*args, cwd=str(tmp_path))
        c.initialize(processId=parent.pid if how == "processId" else None)
        uri = (tmp_path / "a.py").as_uri()
        c.open(uri, PY)
        c.diagnostics(uri)
        assert c.proc.poll() is None
        parent.kill()
        parent.wait()
        # its stdin is still open: only the watch of the process ends it
        assert c.stop(timeout=20) == 1
    finally:
        if parent.poll() is None:
            parent.kill()
