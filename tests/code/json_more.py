# json's rarer parts: JSONDecodeError's attributes (msg, pos, lineno,
# colno).
import json
def err(text):
    try:
        json.loads(text)
    except json.JSONDecodeError as e:
        return (str(e), e.msg, e.pos, e.lineno, e.colno)
    except ValueError as e:
        return "plain ValueError " + str(e)
assert err('{"a": }') == ("Expecting value: line 1 column 7 (char 6)", "Expecting value", 6, 1, 7)
assert err("[1, 2") == ("Expecting ',' delimiter: line 1 column 6 (char 5)", "Expecting ',' delimiter", 5, 1, 6)
assert err("") == ("Expecting value: line 1 column 1 (char 0)", "Expecting value", 0, 1, 1)
assert err('{"a": 1} x') == ("Extra data: line 1 column 10 (char 9)", "Extra data", 9, 1, 10)
assert err("{'a': 1}")[1] == "Expecting property name enclosed in double quotes"
assert err('[1,\n 2,\n x]')[3:] == (3, 2)
err("[1,\n 2,\n x]")
# expect: ("Expecting value: line 3 column 2 (char 9)", "Expecting value", 9, 3, 2)
