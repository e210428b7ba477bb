# JSON text nested 100000 deep: json.loads raises RecursionError (as
# CPython), without exhausting the C stack; 100 levels are fine.
import json
assert json.loads("[" * 100 + "]" * 100) == json.loads("[" * 100 + "]" * 100)
deep = "[" * 100000 + "]" * 100000
try:
    json.loads(deep)
    msg = "parsed"
except RecursionError as e:
    msg = str(e)
obj = '{"a": ' * 50000 + "1" + "}" * 50000
try:
    json.loads(obj)
    msg2 = "parsed"
except RecursionError as e:
    msg2 = str(e)
(msg, msg2)
# expect: ("maximum recursion depth exceeded while decoding a JSON array from a unicode string", "maximum recursion depth exceeded while decoding a JSON object from a unicode string")
