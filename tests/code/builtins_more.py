# Builtins LLM code uses less: id, getattr/hasattr, callable, iter/next,
# type objects and their reprs.
assert str(type(1)) == "<class 'int'>" and repr(type([])) == "<class 'list'>"
assert callable(len) and callable(lambda: 0) and not callable("s")
assert getattr("abc", "upper")() == "ABC" and getattr([], "nope", 5) == 5
assert hasattr("s", "split") and not hasattr(1, "split")
a = []
assert id(a) == id(a) and id(a) != id([])
assert int is type(0) and str(int) == "<class 'int'>" and isinstance(int, type)
it = iter([1, 2])
assert next(it) == 1 and next(it) == 2 and next(it, "end") == "end"
try:
    next(it)
    assert False
except StopIteration:
    pass
(type(1.5).__name__, callable(print), getattr({}, "get")("k", 0))
# expect: ("float", True, 0)
