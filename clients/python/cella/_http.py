"""The HTTP transport: urllib from the standard library, JSON in and out,
cella's error objects raised as CellaError, bodies streamed both ways."""
from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.parse
import urllib.request
from typing import IO, Any, Dict, Iterable, Iterator, Mapping, Optional, Tuple, Union

from .errors import CellaError

Body = Union[bytes, IO[bytes], Iterable[bytes], None]


def quote_path(path: str) -> str:
    """A sandbox path as the files/ and archive/ routes take it: absolute
    (relative means under /workspace), without its leading '/', each
    component percent-encoded. '.' and '..' are left to the sandbox to
    resolve, so they are encoded too: a URL client must not fold them."""
    if not isinstance(path, str) or not path:
        raise ValueError("a sandbox path must be a non-empty string")
    if "\0" in path:
        raise ValueError("a sandbox path cannot hold a NUL byte")
    if not path.startswith("/"):
        path = "/workspace/" + path
    parts = []
    for part in path.lstrip("/").split("/"):
        if part in (".", ".."):
            parts.append(part.replace(".", "%2E"))
        else:
            parts.append(urllib.parse.quote(part, safe=""))
    return "/".join(parts)


def _error_from(status: int, raw: bytes) -> CellaError:
    try:
        doc = json.loads(raw)
    except ValueError:
        doc = None
    if isinstance(doc, dict):
        obj = doc.get("error") if isinstance(doc.get("error"), dict) else doc
        if isinstance(obj, dict) and "code" in obj:
            return CellaError.from_object(obj, status)
    text = raw[:300].decode("utf-8", "replace").strip()
    return CellaError("http", f"HTTP {status}: {text or 'no body'}", status=status)


class Transport:
    def __init__(self, url: str, token: Optional[str], timeout: Optional[float]) -> None:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"the daemon's URL must start with http:// or https://, not {url!r}")
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout

    def open(self, method: str, path: str, body: Body = None,
             headers: Optional[Mapping[str, str]] = None,
             query: Optional[Mapping[str, Any]] = None,
             timeout: Optional[float] = None) -> http.client.HTTPResponse:
        """Sends one request and returns the response (status < 400), to be
        read and closed by the caller. Failures raise CellaError."""
        url = self.url + path
        if query:
            q = {k: ("1" if v is True else str(v)) for k, v in query.items()
                 if v is not None and v is not False}
            if q:
                url += "?" + urllib.parse.urlencode(q)
        h = {"User-Agent": "cella-python/0.1.0"}
        if self.token:
            h["Authorization"] = f"Bearer {self.token}"
        h.update(headers or {})
        req = urllib.request.Request(url, data=body, headers=h, method=method)
        try:
            return urllib.request.urlopen(req, timeout=timeout if timeout is not None
                                          else self.timeout)
        except urllib.error.HTTPError as e:
            with e:
                raise _error_from(e.code, e.read()) from None
        except urllib.error.URLError as e:
            raise CellaError("connection", f"cannot reach the cella daemon at {self.url}: "
                             f"{e.reason}", fix_note="start it with `cella serve`, or set "
                             "CELLA_URL to where it listens") from None
        except OSError as e:
            raise CellaError("connection", f"the connection to {self.url} failed: {e}") from None

    def json(self, method: str, path: str, payload: Optional[Dict[str, Any]] = None,
             query: Optional[Mapping[str, Any]] = None,
             timeout: Optional[float] = None) -> Any:
        body = None
        headers = {}
        if payload is not None:
            body = json.dumps({k: v for k, v in payload.items() if v is not None}).encode()
            headers["Content-Type"] = "application/json"
        with self.open(method, path, body, headers, query, timeout) as r:
            raw = r.read()
        return json.loads(raw) if raw else None

    def sse(self, path: str, payload: Dict[str, Any],
            timeout: Optional[float] = None) -> Iterator[Tuple[str, Any]]:
        """POSTs payload and yields (event, data) from a text/event-stream
        answer. Closing the generator closes the connection, which has the
        daemon kill the command."""
        body = json.dumps({k: v for k, v in payload.items() if v is not None}).encode()
        r = self.open("POST", path, body, {"Content-Type": "application/json",
                                           "Accept": "text/event-stream"}, timeout=timeout)
        try:
            ctype = r.headers.get("Content-Type", "")
            if not ctype.startswith("text/event-stream"):
                # An answer decided before the command started is plain JSON.
                raw = r.read()
                raise _error_from(r.status, raw)
            event, data = "message", []
            for raw in r:
                line = raw.decode("utf-8").rstrip("\r\n")
                if not line:
                    if data:
                        yield event, json.loads("\n".join(data))
                    event, data = "message", []
                elif line.startswith(":"):
                    continue                      # keep-alive
                elif line.startswith("event:"):
                    event = line[6:].strip()
                elif line.startswith("data:"):
                    data.append(line[5:].lstrip(" "))
        finally:
            r.close()
