"""What the calls answer, as plain data classes."""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional


@dataclass
class ExecResult:
    """A finished command. ``exit_code`` is 124 after a timeout (the output
    captured so far is kept) and None when a signal killed the command
    (``signal`` then holds its number)."""
    stdout: str
    stderr: str
    exit_code: Optional[int]
    timed_out: bool
    duration_ms: int
    success: bool
    truncated: bool = False
    signal: Optional[int] = None
    oom_killed: bool = False

    @classmethod
    def from_json(cls, o: Dict[str, Any], stdout: Optional[str] = None,
                  stderr: Optional[str] = None) -> "ExecResult":
        return cls(stdout=o.get("stdout", "") if stdout is None else stdout,
                   stderr=o.get("stderr", "") if stderr is None else stderr,
                   exit_code=o.get("exit_code"), timed_out=bool(o.get("timed_out")),
                   duration_ms=int(o.get("duration_ms") or 0), success=bool(o.get("success")),
                   truncated=bool(o.get("truncated")), signal=o.get("signal"),
                   oom_killed=bool(o.get("oom_killed")))

    def check(self) -> "ExecResult":
        """Raises CellaError unless the command succeeded; returns self."""
        from .errors import CellaError
        if not self.success:
            what = ("timed out" if self.timed_out else
                    f"was killed by signal {self.signal}" if self.exit_code is None else
                    f"exited {self.exit_code}")
            raise CellaError("exit", f"the command {what}: {self.stderr[-500:]}")
        return self


@dataclass
class RunResult(ExecResult):
    """A one-shot run: the command's result, plus, for a typed run, its
    outputs, the attempts made and whether it came from the cache."""
    sandbox_id: Optional[str] = None
    outputs: Dict[str, Any] = field(default_factory=dict)
    outputs_error: Optional[str] = None
    attempts: int = 1
    cached: bool = False

    @classmethod
    def from_json(cls, o: Dict[str, Any], stdout: Optional[str] = None,
                  stderr: Optional[str] = None) -> "RunResult":
        base = ExecResult.from_json(o)
        return cls(**base.__dict__, sandbox_id=o.get("sandbox_id"),
                   outputs=o.get("outputs") or {}, outputs_error=o.get("outputs_error"),
                   attempts=int(o.get("attempts", 1)), cached=bool(o.get("cached", False)))


@dataclass
class ExecEvent:
    """One event of a streamed command: ``kind`` is ``"stdout"`` or
    ``"stderr"`` with ``data`` the text, or ``"exit"`` with ``result``."""
    kind: str
    data: str = ""
    result: Optional[ExecResult] = None


@dataclass
class FileInfo:
    """A path as ls and stat describe it (lstat: a symlink is described,
    not followed). ``mode`` is the octal string, ``mtime`` Unix seconds."""
    name: str
    is_dir: bool
    size: int
    mode: str
    mtime: int
    is_symlink: bool

    @classmethod
    def from_json(cls, o: Dict[str, Any]) -> "FileInfo":
        return cls(name=o["name"], is_dir=bool(o["is_dir"]), size=int(o["size"]),
                   mode=o["mode"], mtime=int(o["mtime"]), is_symlink=bool(o["is_symlink"]))

    @property
    def modified(self) -> _dt.datetime:
        return _dt.datetime.fromtimestamp(self.mtime, tz=_dt.timezone.utc)


@dataclass
class GrepMatch:
    path: str
    line: int
    content: str


@dataclass
class GrepResult:
    matches: List[GrepMatch]
    truncated: bool

    def __iter__(self) -> Iterator[GrepMatch]:
        return iter(self.matches)

    def __len__(self) -> int:
        return len(self.matches)


@dataclass
class SandboxInfo:
    """A sandbox as the daemon lists it."""
    sandbox_id: str
    image: str
    state: str
    name: Optional[str] = None
    cpus: Optional[float] = None
    memory_mb: Optional[int] = None
    idle_timeout_secs: Optional[int] = None
    exec_in_flight: int = 0
    created_at: Optional[str] = None
    last_used_at: Optional[str] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, o: Dict[str, Any]) -> "SandboxInfo":
        return cls(sandbox_id=o["sandbox_id"], image=o.get("image", ""),
                   state=o.get("state", "running"), name=o.get("name"), cpus=o.get("cpus"),
                   memory_mb=o.get("memory_mb"), idle_timeout_secs=o.get("idle_timeout_secs"),
                   exec_in_flight=int(o.get("exec_in_flight", 0)),
                   created_at=o.get("created_at"), last_used_at=o.get("last_used_at"), raw=o)
