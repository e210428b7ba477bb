"""Errors raised by the client: one class, carrying cella's error object."""
from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Tuple


class CellaError(Exception):
    """A call that failed. ``code`` is cella's S-code (``"S002"``: no such
    sandbox), ``fix`` a ready payload to merge into the request and resend
    (or None), ``fix_note`` one line saying what to do next. Errors that
    never reached the daemon have code ``"connection"``; answers that were
    not cella's error object have code ``"http"``."""

    def __init__(self, code: str, message: str, *, status: Optional[int] = None,
                 type: Optional[str] = None, fix: Optional[Dict[str, Any]] = None,
                 fix_note: Optional[str] = None, retryable: bool = False,
                 docs_url: Optional[str] = None) -> None:
        self.code = code
        self.message = message
        self.status = status
        self.type = type
        self.fix = fix
        self.fix_note = fix_note
        self.retryable = retryable
        self.docs_url = docs_url
        text = f"{code}: {message}"
        if fix_note:
            text += f" ({fix_note})"
        super().__init__(text)

    @classmethod
    def from_object(cls, obj: Dict[str, Any], status: Optional[int] = None) -> "CellaError":
        return cls(str(obj.get("code", "http")), str(obj.get("message", "")), status=status,
                   type=obj.get("type"), fix=obj.get("fix"), fix_note=obj.get("fix_note"),
                   retryable=bool(obj.get("retryable", False)), docs_url=obj.get("docs_url"))

    def __reduce__(self) -> Tuple[Callable[..., "CellaError"], Tuple[str, str, Dict[str, Any]]]:
        # picklable, for multiprocessing users
        return (_rebuild, (self.code, self.message, self.__dict__))


def _rebuild(code: str, message: str, state: Dict[str, Any]) -> CellaError:
    # fix_note is part of the text (args), which the state alone does not restore.
    e = CellaError(code, message, fix_note=state.get("fix_note"))
    e.__dict__.update(state)
    return e
