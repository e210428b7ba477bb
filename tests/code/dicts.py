# dict: insertion order, methods, views, merging, keys of mixed types,
# KeyError messages, iteration.
d = {"b": 1, "a": 2}
d["c"] = 3
d["b"] = 10
assert list(d) == ["b", "a", "c"] and list(d.values()) == [10, 2, 3]
assert list(d.items()) == [("b", 10), ("a", 2), ("c", 3)]
assert d.get("z") is None and d.get("z", 0) == 0 and d.get("a") == 2
assert "a" in d and "z" not in d and 10 not in d and len(d) == 3
assert d.pop("a") == 2 and d.pop("zz", "dflt") == "dflt" and list(d) == ["b", "c"]
d["a"] = 0
assert list(d) == ["b", "c", "a"]
assert d.setdefault("n", []) == [] and d.setdefault("b", 99) == 10
d["n"].append(1)
assert d["n"] == [1]
assert d.popitem() == ("n", [1])
d.update({"x": 1}, y=2)
d.update([("z", 3)])
assert d == {"b": 10, "c": 3, "a": 0, "x": 1, "y": 2, "z": 3}
assert {"a": 1, "b": 2} == {"b": 2, "a": 1} and {"a": 1} != {"a": 1.5}
assert dict(a=1, b=2) == {"a": 1, "b": 2} and dict([(1, 2)]) == {1: 2} and dict() == {}
assert dict.fromkeys("ab", 0) == {"a": 0, "b": 0} and dict({"k": 1}, j=2) == {"k": 1, "j": 2}
assert {**{"a": 1}, "b": 2, **{"a": 3}} == {"a": 3, "b": 2}
assert {"a": 1} | {"b": 2} == {"a": 1, "b": 2}
m = {"a": 1}
m |= {"a": 5, "c": 6}
assert m == {"a": 5, "c": 6}
mixed = {1: "int", 1.5: "float", "1": "str", (1, 2): "tuple", None: "none", True: "bool?"}
assert mixed[1] == "bool?" and len(mixed) == 5 and mixed[(1, 2)] == "tuple"
assert mixed[None] == "none" and mixed[1.0] == "bool?"
keys = d.keys()
d["new"] = 1
assert "new" in keys and len(keys) == 7
assert {"a": 1, "b": 2}.keys() & {"b", "c"} == {"b"}
assert sorted({"z": 1, "y": 2}) == ["y", "z"] and max({"a": 9, "b": 1}) == "b"
assert sum({1: "a", 2: "b"}) == 3 and sorted({3: 0, 1: 0}.items()) == [(1, 0), (3, 0)]
counts = {}
for w in "the cat and the hat and the bat".split():
    counts[w] = counts.get(w, 0) + 1
assert counts == {"the": 3, "cat": 1, "and": 2, "hat": 1, "bat": 1}
top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
assert top[:2] == [("the", 3), ("and", 2)]
inv = {v: k for k, v in {"a": 1, "b": 2}.items()}
assert inv == {1: "a", 2: "b"}
groups = {}
for n in range(10):
    groups.setdefault(n % 3, []).append(n)
assert groups == {0: [0, 3, 6, 9], 1: [1, 4, 7], 2: [2, 5, 8]}
nested = {"user": {"name": "ada", "langs": ["py", "c"]}}
nested["user"]["langs"].append("rust")
assert nested["user"]["langs"][-1] == "rust"
assert repr({"a": [1, {"b": None}]}) == "{'a': [1, {'b': None}]}" and str({}) == "{}"
rec = {}
rec["self"] = rec
assert repr(rec) == "{'self': {...}}"
try:
    d["missing"]
    assert False
except KeyError as e:
    assert str(e) == "'missing'" and e.args == ("missing",)
try:
    {}.popitem()
    assert False
except KeyError as e:
    assert str(e) == "'popitem(): dictionary is empty'"
try:
    {[1]: 2}
    assert False
except TypeError as e:
    assert str(e) == "unhashable type: 'list'"
try:
    for k in d:
        d["more"] = 1
    assert False
except RuntimeError as e:
    assert str(e) == "dictionary changed size during iteration"
cp = dict(d)
del_keys = [k for k in cp if k.startswith("n")]
for k in del_keys:
    cp.pop(k)
({1: "a", "k": (1, 2)}, list(cp), {"$tag": 1}, {(1, 2): [3]})
# expect: ({1: "a", "k": (1, 2)}, ["b", "c", "a", "x", "y", "z", "more"], {"$tag": 1}, {(1, 2): [3]})
