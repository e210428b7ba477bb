# bool and None: truthiness, bool arithmetic, identity, short-circuit values.
assert True + True == 2 and True * 3 == 3 and -True == -1 and ~True == -2
assert isinstance(True, int) and not isinstance(1, bool)
assert bool(0) is False and bool(0.0) is False and bool("") is False and bool([]) is False
assert bool({}) is False and bool(()) is False and bool(set()) is False and bool(None) is False
assert bool("0") is True and bool([0]) is True and bool(-1) is True
assert (0 or "x") == "x" and (1 and "y") == "y" and ([] and 1) == [] and (None or 0) == 0
assert (not 0) is True and (not "a") is False
assert None is None and (None == None) and (None != 0)
assert str(None) == "None" and repr(True) == "True" and str(False) == "False"
assert True == 1 and False == 0 and hash(True) == 1 and {True: "t"}[1] == "t"
assert (True is not False) and type(None).__name__ == "NoneType"
assert int(True) + float(False) == 1.0
assert True & False is False and True | False is True and (True ^ True) is False
assert type(True & True) is bool and type(True + False) is int
assert max(True, 2) == 2 and sum([True, True, False]) == 2
assert sorted([True, False, True]) == [False, True, True]
assert [x for x in [0, 1, None, "", "a", [], [0]] if x] == [1, "a", [0]]
calls = []
def side(v):
    calls.append(v)
    return v
assert (side(0) and side(1)) == 0 and calls == [0]
assert (side(2) or side(3)) == 2 and calls == [0, 2]
assert (side(None) or side(False) or side("last")) == "last"
x = None
y = x if x is not None else "default"
(y, None, True, False, 1 == 1.0, None is None)
# expect: ("default", None, True, False, True, True)
