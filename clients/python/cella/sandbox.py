"""One sandbox: commands, streamed output, files."""
from __future__ import annotations

import base64
import json
import math
import os
import shlex
import tempfile
from typing import (TYPE_CHECKING, Any, BinaryIO, Dict, Iterator, List, Mapping, Optional,
                    Sequence, Union)

from ._http import quote_path
from .errors import CellaError
from .results import (ExecEvent, ExecResult, FileInfo, GrepMatch, GrepResult, SandboxInfo)

if TYPE_CHECKING:
    from .client import Client

Command = Union[str, Sequence[str]]
Env = Optional[Mapping[str, str]]

_CHUNK = 1 << 20


def _ms(seconds: Optional[float]) -> Optional[int]:
    """Seconds as the API's milliseconds, rounded up: a timeout is never
    made shorter than asked."""
    if seconds is None:
        return None
    if seconds <= 0:
        raise ValueError("a timeout must be positive")
    return max(1, math.ceil(seconds * 1000))


def _exec_payload(cmd: Command, env: Env, stdin: Union[str, bytes, None],
                  timeout: Optional[float], workdir: Optional[str]) -> Dict[str, Any]:
    p: Dict[str, Any] = {}
    if isinstance(cmd, str):
        # A string is a command line, split as the shell would split words
        # (no pipes or variables: pass ["sh", "-c", "..."] for those).
        p["argv"] = shlex.split(cmd)
    else:
        p["argv"] = [str(a) for a in cmd]
    if not p["argv"]:
        raise ValueError("the command is empty")
    if env:
        p["env"] = dict(env)
    if stdin is not None:
        data = stdin.encode() if isinstance(stdin, str) else bytes(stdin)
        p["stdin"] = base64.b64encode(data).decode()
    p["timeout_ms"] = _ms(timeout)
    p["workdir"] = workdir
    return p


class Sandbox:
    """A live sandbox. Use it as a context manager to have it stopped at
    the end of the block::

        with client.create("python") as sb:
            print(sb.exec("python3 -c 'print(6*7)'").stdout)
    """

    def __init__(self, client: "Client", info: SandboxInfo) -> None:
        self._client = client
        self._t = client._t
        self.info = info

    @property
    def id(self) -> str:
        return self.info.sandbox_id

    def __repr__(self) -> str:
        return f"<cella.Sandbox {self.id} image={self.info.image!r}>"

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self.stop()
        except CellaError as e:
            if e.code not in ("S002", "S004"):      # already gone is fine
                raise

    def _path(self, tail: str) -> str:
        return f"/v1/sandboxes/{self.id}{tail}"

    # ---- lifecycle ------------------------------------------------------------

    def refresh(self) -> SandboxInfo:
        self.info = SandboxInfo.from_json(self._t.json("GET", self._path("")))
        return self.info

    def stop(self, wait: bool = False) -> None:
        """Stops the sandbox: every process killed, its workspace removed."""
        self._t.json("DELETE", self._path(""), query={"wait": "true" if wait else None})

    # ---- commands -------------------------------------------------------------

    def exec(self, cmd: Command, *, env: Env = None, stdin: Union[str, bytes, None] = None,
             timeout: Optional[float] = None, workdir: Optional[str] = None) -> ExecResult:
        """Runs a command and waits for it. ``cmd`` is an argv list, or a
        string split into words like a shell (without its operators).
        ``timeout`` is in seconds (default: the daemon's, 300). A timeout is
        not an error: the result has ``timed_out`` and exit code 124."""
        p = _exec_payload(cmd, env, stdin, timeout, workdir)
        return ExecResult.from_json(self._t.json("POST", self._path("/exec"), p,
                                                 timeout=self._call_timeout(timeout)))

    def stream(self, cmd: Command, *, env: Env = None, stdin: Union[str, bytes, None] = None,
               timeout: Optional[float] = None,
               workdir: Optional[str] = None) -> Iterator[ExecEvent]:
        """Runs a command and yields its output as it comes: ExecEvent
        ``stdout``/``stderr`` with text, then one ``exit`` with the result
        (its stdout/stderr empty). Leaving the loop early (or closing the
        generator) kills the command."""
        p = _exec_payload(cmd, env, stdin, timeout, workdir)
        for event, data in self._t.sse(self._path("/exec"), p, timeout=None):
            if event in ("stdout", "stderr"):
                yield ExecEvent(event, data=data.get("data", ""))
            elif event == "exit":
                yield ExecEvent("exit", result=ExecResult.from_json(data, "", ""))
                return
            elif event == "error":
                obj = data.get("error", data) if isinstance(data, dict) else {}
                raise CellaError.from_object(obj)
        raise CellaError("connection", "the stream ended before the command's exit")

    def _call_timeout(self, timeout: Optional[float]) -> Optional[float]:
        # The HTTP wait outlasts the command's own timeout, which answers.
        base = self._client.timeout
        if base is None:
            return None
        return max(base, (timeout or 300) + 30)

    # ---- files ----------------------------------------------------------------

    def _fs(self, op: str, **fields: Any) -> Any:
        return self._t.json("POST", self._path(f"/fs/{op}"),
                            {k: v for k, v in fields.items() if v is not None})

    def read_file(self, path: str) -> bytes:
        """The file's bytes (any size or content; relative paths are under
        /workspace)."""
        with self._t.open("GET", self._path("/files/" + quote_path(path))) as r:
            return r.read()

    def read_text(self, path: str, encoding: str = "utf-8") -> str:
        return self.read_file(path).decode(encoding)

    def write_file(self, path: str, data: Union[str, bytes], *, mode: Optional[str] = None,
                   parents: bool = True) -> int:
        """Replaces the file with data (text is written as UTF-8), atomically;
        missing parent directories are made unless ``parents=False``.
        Returns the bytes written."""
        body = data.encode() if isinstance(data, str) else bytes(data)
        return self._put(path, body, len(body), mode, parents)

    def upload(self, local_path: Union[str, os.PathLike], remote_path: str, *,
               mode: Optional[str] = None, parents: bool = True) -> int:
        """Streams a local file into the sandbox (never whole in memory)."""
        with open(local_path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            return self._put(remote_path, f, size, mode, parents)

    def _put(self, path: str, body: Union[bytes, BinaryIO], size: int, mode: Optional[str],
             parents: bool) -> int:
        with self._t.open("PUT", self._path("/files/" + quote_path(path)), body,
                          {"Content-Type": "application/octet-stream",
                           "Content-Length": str(size)},
                          query={"parents": parents, "mode": mode}) as r:
            return int(json.loads(r.read())["bytes_written"])

    def download(self, remote_path: str, local_path: Union[str, os.PathLike]) -> int:
        """Streams a sandbox file to a local path. The file is written under
        a temporary name and renamed when complete, so a failed download
        leaves nothing behind. Returns the bytes written."""
        local_path = os.fspath(local_path)
        if os.path.isdir(local_path):
            local_path = os.path.join(local_path, os.path.basename(remote_path.rstrip("/")))
        d = os.path.dirname(os.path.abspath(local_path))
        fd, tmp = tempfile.mkstemp(prefix=".cella-", dir=d)
        n = 0
        try:
            with os.fdopen(fd, "wb") as out, \
                    self._t.open("GET", self._path("/files/" + quote_path(remote_path))) as r:
                while True:
                    chunk = r.read(_CHUNK)
                    if not chunk:
                        break
                    out.write(chunk)
                    n += len(chunk)
                want = r.headers.get("Content-Length")
                if want is not None and int(want) != n:
                    raise CellaError("S216", f"the download ended after {n} of {want} bytes")
            os.replace(tmp, local_path)
        except BaseException:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            raise
        return n

    def ls(self, path: str = "/workspace") -> List[FileInfo]:
        return [FileInfo.from_json(e) for e in self._fs("ls", path=path)["entries"]]

    def stat(self, path: str) -> FileInfo:
        return FileInfo.from_json(self._fs("stat", path=path))

    def exists(self, path: str) -> bool:
        try:
            self.stat(path)
            return True
        except CellaError as e:
            if e.code == "S211":
                return False
            raise

    def mkdir(self, path: str, *, parents: bool = False, mode: Optional[str] = None) -> bool:
        """True when it was made, False when it existed (with parents)."""
        return bool(self._fs("mkdir", path=path, parents=parents, mode=mode)["created"])

    def rm(self, path: str, *, recursive: bool = False) -> None:
        self._fs("rm", path=path, recursive=recursive)

    def mv(self, src: str, dst: str, *, overwrite: bool = False) -> None:
        self._fs("mv", src=src, dst=dst, overwrite=overwrite)

    def chmod(self, path: str, mode: str, *, recursive: bool = False) -> int:
        return int(self._fs("chmod", path=path, mode=mode, recursive=recursive)["updated"])

    def grep(self, pattern: str, path: str = "/workspace", *, ignore_case: bool = False,
             include: Optional[Sequence[str]] = None, exclude: Optional[Sequence[str]] = None,
             max_matches: Optional[int] = None, recursive: bool = True) -> GrepResult:
        """Lines matching a PCRE2 pattern under path (binary files skipped)."""
        o = self._fs("grep", path=path, pattern=pattern, ignore_case=ignore_case,
                     include_glob=list(include) if include else None,
                     exclude_glob=list(exclude) if exclude else None,
                     max_matches=max_matches, recursive=recursive)
        return GrepResult([GrepMatch(m["path"], int(m["line"]), m["content"])
                           for m in o["matches"]], bool(o["truncated"]))

    def glob(self, pattern: str, path: str = "/workspace", *, include_hidden: bool = False,
             max_results: Optional[int] = None) -> List[str]:
        """Paths under path matching a gitignore-style pattern, sorted."""
        return list(self._fs("glob", path=path, pattern=pattern, include_hidden=include_hidden,
                             max_results=max_results)["paths"])

    def sed(self, pattern: str, replacement: str, *, path: Optional[str] = None,
            files: Optional[Sequence[str]] = None, regex: bool = True,
            first_only: bool = False, ignore_case: bool = False) -> Dict[str, Any]:
        """Replaces in the given files, or in every text file under path.
        Returns ``{"results": [{path, replacements, success, error?}],
        "total_replacements": N}``: one failing file does not stop the
        others, so check each result's ``success``."""
        return self._fs("sed", pattern=pattern, replacement=replacement, path=path,
                        files=list(files) if files is not None else None, regex=regex,
                        first_only=first_only, ignore_case=ignore_case)
