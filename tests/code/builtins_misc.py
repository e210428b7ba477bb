# The builtins LLM-written code uses: len range enumerate zip sorted min max
# sum any all map filter reversed isinstance type abs round divmod print
# (sep, end) repr str int float bool list tuple dict set hash ord chr hex.
assert len("abc") == 3 and len([1]) == 1 and len({}) == 0 and len(range(5, 0, -2)) == 3
assert list(range(5)) == [0, 1, 2, 3, 4] and list(range(2, 8, 3)) == [2, 5] and list(range(3, 0)) == []
assert 3 in range(5) and range(0, 10, 2).index(4) == 2 and range(3) == range(0, 3)
assert repr(range(3)) == "range(0, 3)" and repr(range(1, 5, 2)) == "range(1, 5, 2)"
assert list(enumerate("ab")) == [(0, "a"), (1, "b")] and list(enumerate("ab", 1)) == [(1, "a"), (2, "b")]
assert list(zip([1, 2, 3], "ab")) == [(1, "a"), (2, "b")] and list(zip()) == []
assert list(zip(*[(1, "a"), (2, "b")])) == [(1, 2), ("a", "b")]
assert sorted([3, 1, 2]) == [1, 2, 3] and sorted("bca", reverse=True) == ["c", "b", "a"]
assert sorted({"b": 1, "a": 2}.items(), key=lambda kv: kv[1]) == [("b", 1), ("a", 2)]
assert min(3, 1, 2) == 1 and max([1, 5, 3]) == 5 and min("bca") == "a"
assert max(["aa", "b", "ccc"], key=len) == "ccc" and min([], default=None) is None
assert max([(1, "x"), (1, "y")]) == (1, "y") and max([2, 2.0]) == 2 and min(-1, -1.5) == -1.5
assert max([1, 3, 3], key=lambda v: v % 3) == 1
assert sum([1, 2, 3]) == 6 and sum([0.5, 0.5]) == 1.0 and sum([[1], [2]], []) == [1, 2] and sum([], 10) == 10
assert any([0, "", 1]) and not any([]) and all([1, "x"]) and all([]) and not all([1, 0])
assert list(map(str, [1, 2])) == ["1", "2"] and list(map(lambda a, b: a + b, [1, 2], [10, 20])) == [11, 22]
assert list(filter(None, [0, 1, "", "a"])) == [1, "a"] and list(filter(lambda v: v > 1, [1, 2, 3])) == [2, 3]
assert list(reversed([1, 2, 3])) == [3, 2, 1] and "".join(reversed("abc")) == "cba"
assert isinstance(1, int) and isinstance(1.0, (int, float)) and not isinstance("1", (int, float))
assert isinstance([], list) and isinstance({}, dict) and isinstance(True, int) and isinstance(None, type(None))
assert type(1) is int and type("") is str and type([]) == list and type(1.5).__name__ == "float"
assert abs(-3) == 3 and abs(-2.5) == 2.5 and abs(True) == 1
assert round(3.14159, 2) == 3.14 and round(7) == 7 and round(15, -1) == 20 and round(25, -1) == 20
assert divmod(17, 5) == (3, 2) and divmod(-17, 5) == (-4, 3) and divmod(5.5, 2) == (2.0, 1.5)
assert repr("a") == "'a'" and repr([1, "b"]) == "[1, 'b']" and repr(None) == "None" and repr(1.0) == "1.0"
assert str(1) == "1" and int("12") + float("0.5") == 12.5 and bool("x") and list("ab") == ["a", "b"]
assert tuple([1]) == (1,) and dict(a=1) == {"a": 1} and set([1, 1]) == {1} and frozenset("a") == {"a"}
assert hash(1) == 1 and hash("a") == hash("a") and ord("a") == 97 and chr(65) == "A"
assert hex(16) == "0x10" and oct(9) == "0o11" and bin(5) == "0b101" and pow(2, 5) == 32
assert list(map(int, "123")) == [1, 2, 3] and "".join(map(str.upper, "ab")) == "AB"
assert sorted(map(abs, [-3, 1, -2])) == [1, 2, 3] and list(zip(range(3), range(10, 13)))[2] == (2, 12)
assert dict(zip("abc", range(3))) == {"a": 0, "b": 1, "c": 2}
assert [i for i, _ in enumerate([None] * 3)] == [0, 1, 2]
print("a", "b", 1, None, [1], sep="|")
print("no newline", end="")
print(" continued", end="!\n")
print()
print("x", "y", sep="")
print(*range(3))
print("multi\nline")
def errs():
    out = []
    for call in (lambda: len(5), lambda: sum(["a"]), lambda: int("1.5"), lambda: min([]),
                 lambda: abs("x"), lambda: chr(-1), lambda: range(1.5), lambda: iter(3),
                 lambda: round("x"), lambda: divmod(1, 0)):
        try:
            call()
        except Exception as e:
            out.append(f"{type(e).__name__}: {e}")
    return out
assert errs() == [
    "TypeError: object of type 'int' has no len()",
    "TypeError: unsupported operand type(s) for +: 'int' and 'str'",
    "ValueError: invalid literal for int() with base 10: '1.5'",
    "ValueError: min() arg is an empty sequence",
    "TypeError: bad operand type for abs(): 'str'",
    "ValueError: chr() arg not in range(0x110000)",
    "TypeError: 'float' object cannot be interpreted as an integer",
    "TypeError: 'int' object is not iterable",
    "TypeError: type str doesn't define __round__ method",
    "ZeroDivisionError: integer division or modulo by zero",
]
(sorted([5, 2, 9], key=lambda v: -v), list(enumerate("xy", start=5)), max(3, 7, key=lambda v: -v))
# expect: ([9, 5, 2], [(5, "x"), (6, "y")], 3)
