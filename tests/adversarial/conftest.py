"""The escape suite borrows the end-to-end helpers of tests/integration: its
conftest (CELLA, HANG_LIMIT, the root check) and daemon.py. Both import
`conftest` by name, which resolves to this file, so everything the
integration conftest defines is re-exported from here."""
import importlib.util
import os
import sys

_INTEG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration")
sys.path.insert(0, _INTEG)
_spec = importlib.util.spec_from_file_location("cella_integration_conftest",
                                               os.path.join(_INTEG, "conftest.py"))
_integ = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_integ)

CELLA = _integ.CELLA
HANG_LIMIT = _integ.HANG_LIMIT
box = _integ.box
state_dir = _integ.state_dir        # fixtures, registered by being named here
needs_root = _integ.needs_root
