"""The entry point: a Client talks to one cella daemon."""
from __future__ import annotations

import base64
import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from ._http import Transport
from .results import RunResult, SandboxInfo
from .sandbox import Env, Sandbox, _ms

DEFAULT_URL = "http://127.0.0.1:7878"


def _typed_inputs(inputs: Mapping[str, Any]) -> Dict[str, Any]:
    """Python values as the typed run's {"name": {"type", "value"}}:
    ints, floats, strs, bools, datetimes, timedeltas and bytes (a file).
    A value already in the wire form ({"type": ..., "value": ...}) passes."""
    import datetime as dt
    out: Dict[str, Any] = {}
    for name, v in inputs.items():
        if isinstance(v, dict) and "type" in v:
            out[name] = v
        elif isinstance(v, bool):
            out[name] = {"type": "bool", "value": v}
        elif isinstance(v, int):
            out[name] = {"type": "int", "value": v}
        elif isinstance(v, float):
            out[name] = {"type": "float", "value": v}
        elif isinstance(v, str):
            out[name] = {"type": "str", "value": v}
        elif isinstance(v, dt.datetime):
            out[name] = {"type": "datetime", "value": v.isoformat()}
        elif isinstance(v, dt.timedelta):
            out[name] = {"type": "timedelta", "value": v.total_seconds()}
        elif isinstance(v, (bytes, bytearray)):
            out[name] = {"type": "file",
                         "value": {"content_b64": base64.b64encode(bytes(v)).decode()}}
        else:
            raise TypeError(f"input {name!r}: cannot send a {type(v).__name__} "
                            "(int, float, str, bool, datetime, timedelta or bytes)")
    return out


def _typed_outputs(outputs: Union[Mapping[str, Any], None]) -> Optional[Dict[str, str]]:
    """{"name": type} where type is a name ("int") or a Python type (int)."""
    if outputs is None:
        return None
    import datetime as dt
    names = {int: "int", float: "float", str: "str", bool: "bool", dt.datetime: "datetime",
             dt.timedelta: "timedelta", bytes: "file"}
    return {k: (v if isinstance(v, str) else names[v]) for k, v in outputs.items()}


class Client:
    """A connection to a cella daemon.

    ``url`` defaults to $CELLA_URL, then http://127.0.0.1:7878; ``token``
    to $CELLA_TOKEN (sent as a bearer token). ``timeout`` bounds each HTTP
    call in seconds (None: no bound; commands get their own timeout on top).
    """

    def __init__(self, url: Optional[str] = None, token: Optional[str] = None,
                 timeout: Optional[float] = 60.0) -> None:
        self.url = url or os.environ.get("CELLA_URL") or DEFAULT_URL
        self.token = token if token is not None else os.environ.get("CELLA_TOKEN") or None
        self.timeout = timeout
        self._t = Transport(self.url, self.token, timeout)

    def __repr__(self) -> str:
        return f"<cella.Client {self.url}>"

    def create(self, image: str = "python", *, cpus: Optional[float] = None,
               memory_mb: Optional[int] = None, name: Optional[str] = None,
               idle_timeout_secs: Optional[int] = None, env: Env = None) -> Sandbox:
        """Creates a sandbox (from the warm pool when one is ready)."""
        o = self._t.json("POST", "/v1/sandboxes", {
            "image": image, "cpus": cpus, "memory_mb": memory_mb, "name": name,
            "idle_timeout_secs": idle_timeout_secs, "env": dict(env) if env else None})
        return Sandbox(self, SandboxInfo.from_json(o))

    def sandbox(self, sandbox_id: str) -> Sandbox:
        """An existing sandbox of yours, by id (S002 when there is none)."""
        return Sandbox(self, SandboxInfo.from_json(
            self._t.json("GET", f"/v1/sandboxes/{sandbox_id}")))

    def list(self) -> List[SandboxInfo]:
        return [SandboxInfo.from_json(o) for o in self._t.json("GET", "/v1/sandboxes")["sandboxes"]]

    def catalog(self) -> List[Dict[str, Any]]:
        return list(self._t.json("GET", "/v1/catalog")["images"])

    def healthy(self) -> bool:
        try:
            return self._t.json("GET", "/healthz").get("status") == "ok"
        except Exception:
            return False

    def run(self, code: Optional[str] = None, *, image: str = "python",
            lang: Optional[str] = None, files: Optional[Mapping[str, str]] = None,
            env: Env = None, stdin: Union[str, bytes, None] = None,
            timeout: Optional[float] = None, keep_sandbox: bool = False,
            inputs: Optional[Mapping[str, Any]] = None,
            outputs: Optional[Mapping[str, Any]] = None, auto_io: Optional[bool] = None,
            command: Optional[Sequence[str]] = None,
            arguments: Optional[Sequence[str]] = None, retries: Optional[int] = None,
            cache: Optional[str] = None) -> RunResult:
        """One-shot: a fresh sandbox runs ``code`` (or ``command``) and is
        stopped. ``files`` maps paths (relative: under /workspace) to text.
        With ``inputs``/``outputs`` (Python values and types), ``command``,
        ``retries`` or ``cache`` it is a typed run (Flyte-style): inputs are
        staged under /var/inputs, declared outputs come back in
        ``result.outputs``."""
        typed = any(x is not None for x in (inputs, outputs, auto_io, command, arguments,
                                            retries, cache))
        p: Dict[str, Any] = {"image": image, "code": code, "env": dict(env) if env else None,
                             "timeout_ms": _ms(timeout),
                             "keep_sandbox": keep_sandbox or None}
        if command is None:
            if code is None:
                raise ValueError("give code (or, for a typed run, command)")
            p["lang"] = lang or ("python" if image == "python" or typed else None)
            if p["lang"] is None:
                raise ValueError("give lang for an image other than python")
        if files:
            p["files"] = [{"path": k, "content": v} for k, v in files.items()]
        if stdin is not None:
            data = stdin.encode() if isinstance(stdin, str) else bytes(stdin)
            p["stdin"] = base64.b64encode(data).decode()
        if typed:
            p.update({"inputs": _typed_inputs(inputs) if inputs else None,
                      "outputs": _typed_outputs(outputs), "auto_io": auto_io,
                      "command": list(command) if command is not None else None,
                      "arguments": list(arguments) if arguments is not None else None,
                      "retries": retries, "cache": cache})
        wait = None if self.timeout is None else max(self.timeout, (timeout or 300) *
                                                      (1 + (retries or 0)) + 30)
        return RunResult.from_json(self._t.json("POST", "/v1/run", p, timeout=wait))
