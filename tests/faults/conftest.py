"""The fault-injection tests reuse the end-to-end helpers of
tests/integration (its conftest.py and daemon.py): the same real `cella`
binary ($CELLA_BIN), the same live daemon on a random loopback port.

pytest imports this file as the module `conftest`, the name daemon.py
imports its helpers from, so this module loads the integration conftest
under another name and takes over everything it defines (fixtures too)."""
import importlib.util
import os
import sys

_INTEGRATION = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration")
sys.path.insert(0, _INTEGRATION)

_spec = importlib.util.spec_from_file_location("integration_conftest",
                                               os.path.join(_INTEGRATION, "conftest.py"))
_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_mod)
globals().update({k: v for k, v in vars(_mod).items() if not k.startswith("__")})
