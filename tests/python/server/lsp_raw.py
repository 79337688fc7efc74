"""A bare LSP client for the tests that a well-behaved client cannot make:
raw bytes on the server's stdin (garbage, a frame without a length), the
server's exit status, its client's process dying. It starts ``python -m
anydev server`` and frames messages itself (Content-Length headers); the
well-behaved tests use pytest-lsp's client (test_server.py)."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from typing import Any, Optional


class RawClient:
    def __init__(self, *args: str, cwd: Optional[str] = None) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ANYDEV_")}
        self.proc = subprocess.Popen([sys.executable, "-m", "anydev", "server", *args],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, cwd=cwd, env=env)
        self.messages: "queue.Queue[dict]" = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                line = line.strip()
                if not line:
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            body = out.read(length)
            self.messages.put(json.loads(body))

    def raw(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, msg: dict) -> None:
        body = json.dumps(msg).encode()
        self.raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params or {}})

    def request(self, method: str, params: Any = None, timeout: float = 30) -> dict:
        self.next_id += 1
        mid = self.next_id
        self.send({"jsonrpc": "2.0", "id": mid, "method": method, "params": params or {}})
        return self.wait(lambda m: m.get("id") == mid and "method" not in m, timeout)

    def wait(self, pred, timeout: float = 30) -> dict:
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise TimeoutError("no such message from the server")
            m = self.messages.get(timeout=left)
            if pred(m):
                return m

    def diagnostics(self, uri: str, timeout: float = 30) -> list:
        m = self.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                      and m["params"]["uri"] == uri, timeout)
        return m["params"]["diagnostics"]

    def initialize(self, **params: Any) -> dict:
        got = self.request("initialize", {"processId": None, "capabilities": {}, **params})
        self.notify("initialized")
        return got

    def open(self, uri: str, text: str, language: str = "python", version: int = 1) -> None:
        self.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": language, "version": version, "text": text}})

    def stop(self, timeout: float = 30) -> int:
        try:
            return self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
