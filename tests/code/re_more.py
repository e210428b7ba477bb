# re beyond the everyday: backreferences, lookaround, lazy and counted
# quantifiers, Unicode word characters, the error of a bad pattern.
import re
assert re.sub(r"\s+", " ", "a   b \t c") == "a b c" and re.sub(r"(\w+)@(\w+)", r"\2 at \1", "me@host") == "host at me"
assert re.findall(r"\bcat\b", "cat concat cat.") == ["cat", "cat"]
assert re.search(r"(\d{3})\1", "123123").group(1) == "123"
assert re.findall(r"[^aeiou\s]+", "hello world") == ["h", "ll", "w", "rld"]
assert re.sub(r"(?<=\d)(?=(\d{3})+$)", ",", "1234567") == "1,234,567"
assert re.findall(r"a+?", "aaa") == ["a", "a", "a"] and re.match(r"a{2,3}", "aaaa").group() == "aaa"
assert re.findall(r"\w+", "naïve café") == ["naïve", "café"]
try:
    re.compile(r"(unclosed")
    assert False
except re.error as e:
    assert str(e) == "missing ), unterminated subpattern at position 0"
re.sub(r"(\w+) (\w+)", r"\2 \1", "hello world")
# expect: "world hello"
