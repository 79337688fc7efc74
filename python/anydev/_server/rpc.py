"""JSON-RPC 2.0 over a byte stream, as the Language Server Protocol's base
protocol frames it: a header of ``Content-Length: N`` (and optionally
``Content-Type``) lines, a blank line, then N bytes of UTF-8 JSON.

A reader never gives up on bad input: a header without a length, a body that
is not JSON, or JSON that is not a request, a response or a notification, is
returned as an :class:`Invalid` message, which the server answers with the
JSON-RPC error for it (``id`` null when it has none) and reads on; only the
end of the stream ends it. A body over ``MAX_MESSAGE`` bytes is skipped, not
held.
"""

from __future__ import annotations

import json
import threading
from typing import Any, BinaryIO, Optional

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
SERVER_NOT_INITIALIZED = -32002
REQUEST_CANCELLED = -32800

#: The largest message read (a 50 MB file opened in an editor is about 55 MB of JSON).
MAX_MESSAGE = 512 << 20
#: The longest header line read.
_MAX_HEADER_LINE = 8192


class Invalid:
    """A message that could not be read: the error to answer it with."""

    __slots__ = ("code", "message", "id")

    def __init__(self, code: int, message: str, id: Any = None) -> None:
        self.code, self.message, self.id = code, message, id

    def __repr__(self) -> str:
        return f"Invalid({self.code}, {self.message!r})"


def _valid_id(v: Any) -> bool:
    return (isinstance(v, (int, str)) and not isinstance(v, bool))


def check_message(msg: Any) -> "dict | Invalid":
    """The message if it is a JSON-RPC 2.0 request, notification or
    response, else the Invalid that says why."""
    if not isinstance(msg, dict):
        return Invalid(INVALID_REQUEST, "a message must be a JSON object")
    mid = msg.get("id")
    if "id" in msg and mid is not None and not _valid_id(mid):
        return Invalid(INVALID_REQUEST, "`id` must be an integer or a string")
    if msg.get("jsonrpc") != "2.0":
        return Invalid(INVALID_REQUEST, '`jsonrpc` must be "2.0"', mid if _valid_id(mid) else None)
    if "method" in msg:
        if not isinstance(msg["method"], str):
            return Invalid(INVALID_REQUEST, "`method` must be a string",
                           mid if _valid_id(mid) else None)
        params = msg.get("params")
        if params is not None and not isinstance(params, (dict, list)):
            return Invalid(INVALID_REQUEST, "`params` must be an object or an array",
                           mid if _valid_id(mid) else None)
        return msg
    if "result" in msg or "error" in msg:
        return msg  # a response to a request of ours
    return Invalid(INVALID_REQUEST, "a message needs a `method` (or a `result` or `error`)",
                   mid if _valid_id(mid) else None)


class Reader:
    """Reads messages from a binary stream (:meth:`read`)."""

    def __init__(self, stream: BinaryIO) -> None:
        self._in = stream

    def _line(self) -> Optional[bytes]:
        line = self._in.readline(_MAX_HEADER_LINE)
        return line if line else None

    def read(self) -> "dict | Invalid | None":
        """The next message, an Invalid, or None at the end of the stream."""
        length = None
        bad_header = None
        saw_header = False
        while True:
            line = self._line()
            if line is None:
                return None
            if not line.endswith(b"\n"):  # a header line too long: skip it
                while line is not None and not line.endswith(b"\n"):
                    line = self._line()
                if line is None:
                    return None
                bad_header = "a header line is too long"
                continue
            text = line.rstrip(b"\r\n")
            if not text:
                if saw_header:
                    break
                continue  # blank lines between messages
            saw_header = True
            name, sep, value = text.partition(b":")
            if not sep:
                bad_header = f"not a header line: {text[:80]!r}"
                continue
            if name.strip().lower() == b"content-length":
                try:
                    length = int(value.strip())
                    if length < 0:
                        raise ValueError
                except ValueError:
                    bad_header = f"Content-Length is not a length: {value.strip()[:40]!r}"
                    length = None
        if length is None:
            return Invalid(PARSE_ERROR, bad_header or "a message without Content-Length")
        if length > MAX_MESSAGE:
            left = length
            while left > 0:
                chunk = self._in.read(min(left, 1 << 20))
                if not chunk:
                    return None
                left -= len(chunk)
            return Invalid(PARSE_ERROR, f"a message of {length} bytes, over the limit of "
                                        f"{MAX_MESSAGE}; skipped")
        body = self._read_exactly(length)
        if body is None:
            return None
        try:
            msg = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as e:
            return Invalid(PARSE_ERROR, f"the message is not UTF-8 JSON: {e}")
        return check_message(msg)

    def _read_exactly(self, n: int) -> Optional[bytes]:
        parts = []
        while n > 0:
            chunk = self._in.read(n)
            if not chunk:
                return None
            parts.append(chunk)
            n -= len(chunk)
        return b"".join(parts)


class Writer:
    """Writes messages to a binary stream, one at a time (thread-safe)."""

    def __init__(self, stream: BinaryIO) -> None:
        self._out = stream
        self._lock = threading.Lock()
        self.closed = False

    def write(self, msg: dict) -> None:
        body = json.dumps(msg, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        head = f"Content-Length: {len(body)}\r\n\r\n".encode("ascii")
        with self._lock:
            if self.closed:
                return
            try:
                self._out.write(head + body)
                self._out.flush()
            except (OSError, ValueError):  # the client went away
                self.closed = True

    def respond(self, mid: Any, result: Any) -> None:
        self.write({"jsonrpc": "2.0", "id": mid, "result": result})

    def error(self, mid: Any, code: int, message: str) -> None:
        self.write({"jsonrpc": "2.0", "id": mid, "error": {"code": code, "message": message}})

    def notify(self, method: str, params: Any) -> None:
        self.write({"jsonrpc": "2.0", "method": method, "params": params})
