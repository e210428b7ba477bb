# Dunder methods called by name, which hasattr sees as CPython's builtin
# types define them, and the errors of exceptions with attributes.
import json
assert "abc".__len__() == 3 and [1, 2].__contains__(2) and (7).__rsub__(10) == 3
assert (2).__pow__(10, 1000) == 24 and (1).__add__(1.5) is NotImplemented
assert [1].__eq__([1]) and (1.0).__lt__(2) and [].__hash__ is None
d = {"b": 2, "a": 1}
assert sorted(d, key=d.__getitem__) == ["a", "b"] and d.__class__.__name__ == "dict"
names = ["__len__", "__getitem__", "__setitem__", "__add__", "__radd__", "__sub__",
         "__mul__", "__rmul__", "__mod__", "__invert__", "__bool__", "__iter__", "__next__"]
have = {type(x).__name__: [n for n in names if hasattr(x, n)]
        for x in [0, 1.5, "s", b"b", [1], (1,), {1: 2}, {1}, range(3), None]}
it = iter([])
try:
    it.__next__()
except StopIteration:
    have["stop"] = True
try:
    "é".encode("ascii")
except UnicodeEncodeError as e:
    have["encode"] = (e.args, e.start, e.end, e.reason, str(e))
try:
    b"a\xff".decode()
except UnicodeDecodeError as e:
    have["decode"] = (e.object, e.encoding, str(e))
e = json.JSONDecodeError("Bad", "x\nyz", 3)
have["json"] = (str(e), e.msg, e.pos, e.lineno, e.colno, e.doc)
have
# expect: {'int': ['__add__', '__radd__', '__sub__', '__mul__', '__rmul__', '__mod__', '__invert__', '__bool__'], 'float': ['__add__', '__radd__', '__sub__', '__mul__', '__rmul__', '__mod__', '__bool__'], 'str': ['__len__', '__getitem__', '__add__', '__mul__', '__rmul__', '__mod__', '__iter__'], 'bytes': ['__len__', '__getitem__', '__add__', '__mul__', '__rmul__', '__mod__', '__iter__'], 'list': ['__len__', '__getitem__', '__setitem__', '__add__', '__mul__', '__rmul__', '__iter__'], 'tuple': ['__len__', '__getitem__', '__add__', '__mul__', '__rmul__', '__iter__'], 'dict': ['__len__', '__getitem__', '__setitem__', '__iter__'], 'set': ['__len__', '__sub__', '__iter__'], 'range': ['__len__', '__getitem__', '__bool__', '__iter__'], 'NoneType': ['__bool__'], 'stop': True, 'encode': (('ascii', 'é', 0, 1, 'ordinal not in range(128)'), 0, 1, 'ordinal not in range(128)', "'ascii' codec can't encode character '\\xe9' in position 0: ordinal not in range(128)"), 'decode': (b'a\xff', 'utf-8', "'utf-8' codec can't decode byte 0xff in position 1: invalid start byte"), 'json': ('Bad: line 2 column 2 (char 3)', 'Bad', 3, 2, 2, 'x\nyz')}
