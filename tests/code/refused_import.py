# cella-only
# functions: add
# Imports outside json, math, re, datetime and asyncio fail when the
# statement runs (ModuleNotFoundError, as CPython for a missing module), so
# the usual fallback works; an uncaught one ends the run.
try:
    import numpy
    have_numpy = True
except ImportError as e:
    have_numpy = False
    assert str(e) == "No module named 'numpy'" and type(e) is ModuleNotFoundError
try:
    from os import path
    assert False
except ModuleNotFoundError as e:
    assert str(e) == "No module named 'os'"
import json, math as m
assert m.floor(1.5) == 1 and json.loads("1") == 1
print("before")
import subprocess
# expect-error: ModuleNotFoundError: No module named 'subprocess'
