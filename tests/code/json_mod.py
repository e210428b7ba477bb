# json: dumps (separators, indent, sort_keys, ensure_ascii, non-str keys,
# floats), loads (every JSON type, errors), round trips.
import json
assert json.dumps({"a": 1, "b": [1, 2.5, None, True, False]}) == '{"a": 1, "b": [1, 2.5, null, true, false]}'
assert json.dumps("héllo") == '"h\\u00e9llo"' and json.dumps("héllo", ensure_ascii=False) == '"héllo"'
assert json.dumps({"b": 1, "a": 2}, sort_keys=True) == '{"a": 2, "b": 1}'
assert json.dumps([1, 2], separators=(",", ":")) == "[1,2]"
assert json.dumps({"k": [1, {"n": None}]}, indent=2) == '{\n  "k": [\n    1,\n    {\n      "n": null\n    }\n  ]\n}'
assert json.dumps({1: "int key", 2.5: "f", False: "b", None: "n"}) == '{"1": "int key", "2.5": "f", "false": "b", "null": "n"}'
assert json.dumps((1, 2)) == "[1, 2]" and json.dumps(1e20) == "1e+20" and json.dumps(2 ** 70) == "1180591620717411303424"
assert json.dumps(float("inf")) == "Infinity" and json.dumps("\n\t\"\\") == '"\\n\\t\\"\\\\"'
assert json.dumps("\x00\u2028") == '"\\u0000\\u2028"' and json.dumps("😀") == '"\\ud83d\\ude00"'
assert json.dumps([]) == "[]" and json.dumps({}) == "{}" and json.dumps({}, indent=2) == "{}"
doc = json.loads('{"name": "ada", "n": 3, "x": 1.5, "ok": true, "nil": null, "list": [1, "two", [3]], "e": 1e3}')
assert doc == {"name": "ada", "n": 3, "x": 1.5, "ok": True, "nil": None, "list": [1, "two", [3]], "e": 1000.0}
assert type(doc["n"]) is int and type(doc["e"]) is float
assert json.loads('"\\u00e9\\ud83d\\ude00\\n"') == "é😀\n" and json.loads(" [ ] ") == []
assert json.loads("12345678901234567890123") == 12345678901234567890123 and json.loads("-0.0") == -0.0
assert json.loads('{"a": 1, "a": 2}') == {"a": 2} and json.loads("NaN") != json.loads("NaN")
data = {"users": [{"id": i, "tags": ["t"] * i} for i in range(3)], "total": 3}
assert json.loads(json.dumps(data)) == data
assert json.loads(json.dumps(data, indent=4, sort_keys=True)) == data
def err(text):
    try:
        json.loads(text)
    except json.JSONDecodeError as e:
        return str(e)
assert err('{"a": }') == "Expecting value: line 1 column 7 (char 6)"
assert err("[1, 2") == "Expecting ',' delimiter: line 1 column 6 (char 5)"
assert err("") == "Expecting value: line 1 column 1 (char 0)"
assert err('{"a": 1} x') == "Extra data: line 1 column 10 (char 9)"
assert err("{'a': 1}") == "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"
assert issubclass(json.JSONDecodeError, ValueError)
try:
    json.dumps({"s": {1, 2}})
    assert False
except TypeError as e:
    assert str(e) == "Object of type set is not JSON serializable"
try:
    json.dumps({(1, 2): "tuple key"})
    assert False
except TypeError as e:
    assert str(e) == "keys must be str, int, float, bool or None, not tuple"
payload = json.dumps({"query": "weather", "cities": ["London", "Paris"]}, separators=(",", ":"))
(payload, json.loads("[1, 2.0, \"3\"]"), json.loads('{"nested": {"deep": [null]}}'))
# expect: ('{"query":"weather","cities":["London","Paris"]}', [1, 2.0, "3"], {"nested": {"deep": [None]}})
