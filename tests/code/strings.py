# str and its methods, indexing by code point (non-ASCII too), comparisons.
s = "Hello, World"
assert len(s) == 12 and s[0] == "H" and s[-1] == "d" and s[7:] == "World"
assert s.lower() == "hello, world" and s.upper() == "HELLO, WORLD"
assert s.swapcase() == "hELLO, wORLD" and "hello world".title() == "Hello World"
assert "hello".capitalize() == "Hello" and "HeLLo".casefold() == "hello"
assert s.find("o") == 4 and s.rfind("o") == 8 and s.find("z") == -1 and s.index("W") == 7
assert s.count("l") == 3 and s.count("") == 13
assert s.startswith("Hell") and s.endswith(("x", "ld")) and not s.startswith("ello")
assert s.replace("l", "L") == "HeLLo, WorLd" and s.replace("l", "", 2) == "Heo, World"
assert "a,b,,c".split(",") == ["a", "b", "", "c"] and "  a  b ".split() == ["a", "b"]
assert "a,b,c".split(",", 1) == ["a", "b,c"] and "a,b,c".rsplit(",", 1) == ["a,b", "c"]
assert "l1\nl2\r\nl3".splitlines() == ["l1", "l2", "l3"]
assert "l1\nl2\n".splitlines(keepends=True) == ["l1\n", "l2\n"]
assert "-".join(["a", "b", "c"]) == "a-b-c" and "".join([]) == ""
assert "  pad  ".strip() == "pad" and "xxpadxx".strip("x") == "pad"
assert "  pad".lstrip() == "pad" and "pad  ".rstrip() == "pad"
assert "abc".partition("b") == ("a", "b", "c") and "abc".rpartition("x") == ("", "", "abc")
assert "42".zfill(5) == "00042" and "-42".zfill(5) == "-0042"
assert "ab".center(6, "*") == "**ab**" and "ab".ljust(4) == "ab  " and "ab".rjust(4, "0") == "00ab"
assert "abc".isalpha() and "123".isdigit() and "12a".isalnum() and "   ".isspace()
assert "abc".islower() and "ABC".isupper() and "Title Case".istitle() and "x1".isidentifier()
assert not "".isdigit() and "١٢".isdigit() and "12".isdecimal() and "½".isnumeric()
assert "prefix_name".removeprefix("prefix_") == "name" and "a.py".removesuffix(".py") == "a"
assert "a\tb".expandtabs(4) == "a   b"
assert "ab" * 3 == "ababab" and 2 * "x" == "xx" and "ab" * 0 == "" and "ab" * -1 == ""
assert "b" in "abc" and "" in "abc" and "d" not in "abc"
assert "abc" < "abd" < "b" and "Z" < "a" and "" < "a" and "ab" < "abc"
assert ord("A") == 65 and chr(97) == "a" and ord("é") == 233 and chr(0x1F600) == "😀"
assert str(12) == "12" and str([1, "a"]) == "[1, 'a']" and repr("it's") == '"it\'s"'
assert repr('a"b\'c') == "'a\"b\\'c'" and repr("\n\t\\") == "'\\n\\t\\\\'"
assert repr("\x00\x7f\u00e9\u200b") == "'\\x00\\x7fé\\u200b'"
assert ascii("é😀") == "'\\xe9\\U0001f600'"
u = "naïve café 😀!"
assert len(u) == 13 and u[2] == "ï" and u[-2] == "😀" and u[6:10] == "café"
assert u[::-1] == "!😀 éfac evïan" and u.upper() == "NAÏVE CAFÉ 😀!"
assert u.index("😀") == 11 and u.encode("utf-8")[:3] == b"na\xc3"
assert "ß".upper() == "SS" and "İ".lower() == "i̇" and len("İ".lower()) == 2
assert list("héllo") == ["h", "é", "l", "l", "o"]
assert [c for c in "a😀b"] == ["a", "😀", "b"]
assert "x".join("abc") == "axbxc" and "%".join(["1", "2"]) == "1%2"
assert "Hello"[1:4] == "ell" and "Hello"[10:] == "" and "Hello"[-100:2] == "He"
assert "a b c".split(" ", maxsplit=1) == ["a", "b c"]
assert "CamelCaseWord".find("Case", 2, 9) == 5 and "aaa".replace("a", "b", 0) == "aaa"
assert "abc".translate({ord("a"): "A", ord("b"): None}) == "Ac"
assert str.maketrans("ab", "xy") == {97: 120, 98: 121}
assert "tEST".capitalize() == "Test" and "hello world".count("o", 5) == 1
assert "{}".format("x") == "x"
assert min("hello") == "e" and max("hello") == "o" and sorted("cab") == ["a", "b", "c"]
assert hash("abc") == hash("ab" + "c") and "abc" == "".join(["a", "bc"])
t = ""
for ch in "abc":
    t += ch.upper()
assert t == "ABC"
try:
    "abc"[3]
    assert False
except IndexError as e:
    assert str(e) == "string index out of range"
try:
    "abc".index("z")
    assert False
except ValueError as e:
    assert str(e) == "substring not found"
try:
    "abc"[0] = "x"
    assert False
except TypeError as e:
    assert str(e) == "'str' object does not support item assignment"
try:
    "a" + 1
    assert False
except TypeError as e:
    assert str(e) == 'can only concatenate str (not "int") to str'
try:
    "".join(["a", 1])
    assert False
except TypeError as e:
    assert str(e) == "sequence item 1: expected str instance, int found"
(s.split(", "), u[11], "a-b".split("-", -1), "%".join("ab"))
# expect: (["Hello", "World"], "😀", ["a", "b"], "a%b")
