"""cella: run untrusted code in sandboxes, from Python.

    import cella

    client = cella.Client()                 # $CELLA_URL, $CELLA_TOKEN
    with client.create("python") as sb:
        sb.write_file("main.py", "print(6 * 7)")
        print(sb.exec(["python3", "main.py"]).stdout)    # 42

Standard library only. Errors are raised as CellaError, with cella's
S-code, message, fix and fix_note.
"""
from .client import Client
from .errors import CellaError
from .results import (ExecEvent, ExecResult, FileInfo, GrepMatch, GrepResult, RunResult,
                      SandboxInfo)
from .sandbox import Sandbox

__all__ = ["Client", "Sandbox", "CellaError", "ExecResult", "RunResult", "ExecEvent",
           "FileInfo", "GrepMatch", "GrepResult", "SandboxInfo"]
__version__ = "0.1.0"
