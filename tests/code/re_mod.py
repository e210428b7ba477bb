# re: search, match, fullmatch, findall, finditer, sub (string and function
# replacements), split, compile, groups (numbered, named), flags, escape.
import re
m = re.search(r"(\d+)-(\d+)", "call 555-1234 now")
assert m is not None and m.group() == "555-1234" and m.group(0) == "555-1234" and m.group(1) == "555"
assert m.groups() == ("555", "1234") and m.span() == (5, 13) and m.start(2) == 9 and m.end() == 13
assert m.group(1, 2) == ("555", "1234") and m[2] == "1234"
assert re.match(r"\d", "a1") is None and re.match(r"a\d", "a1b").group() == "a1"
assert re.fullmatch(r"[a-z]+", "abc") is not None and re.fullmatch(r"[a-z]+", "abc1") is None
assert re.findall(r"\d+", "a1b22c333") == ["1", "22", "333"]
assert re.findall(r"(\w)=(\d)", "a=1, b=2") == [("a", "1"), ("b", "2")]
assert re.findall(r"x*", "axx") == ["", "xx", ""]
assert [mm.group() for mm in re.finditer(r"[A-Z]", "aBcDe")] == ["B", "D"]
assert re.sub(r"\d", lambda mm: str(int(mm.group()) * 2), "a1b2") == "a2b4"
assert re.sub("a", "b", "aaa", count=2) == "bba" and re.subn("a", "b", "aaa") == ("bbb", 3)
assert re.split(r"[,;]\s*", "a, b;c") == ["a", "b", "c"] and re.split(r"(-)", "1-2") == ["1", "-", "2"]
assert re.split(r"\s", "a b c", maxsplit=1) == ["a", "b c"]
m = re.match(r"(?P<key>\w+):\s*(?P<value>.*)", "Host: example.com")
assert m.group("key") == "Host" and m["value"] == "example.com"
assert m.groupdict() == {"key": "Host", "value": "example.com"}
assert re.search(r"hello", "HeLLo world", re.IGNORECASE).group() == "HeLLo"
assert re.findall(r"^\w+", "one\ntwo\nthree", re.MULTILINE) == ["one", "two", "three"]
assert re.search(r"a.b", "a\nb") is None and re.search(r"a.b", "a\nb", re.DOTALL) is not None
assert re.search(r"(?i)ABC", "xabcx").span() == (1, 4)
pat = re.compile(r"(\w+)@(\w+)\.com")
assert pat.search("mail bob@site.com today").groups() == ("bob", "site")
assert pat.findall("a@b.com c@d.com") == [("a", "b"), ("c", "d")] and pat.pattern == r"(\w+)@(\w+)\.com"
assert re.escape("a.b*c") == "a\\.b\\*c" and re.search(re.escape("1+1"), "is 1+1?").start() == 3
assert re.match(r"(a)?b", "b").groups() == (None,) and re.match(r"(a)?b", "b").group(1) is None
log = "2024-01-05 ERROR disk full\n2024-01-05 INFO ok\n2024-01-06 ERROR net down"
errors = [(d, msg) for d, msg in re.findall(r"^(\S+) ERROR (.*)$", log, re.M)]
(errors, re.sub(r"[aeiou]", "", "programming"))
# expect: ([("2024-01-05", "disk full"), ("2024-01-06", "net down")], "prgrmmng")
