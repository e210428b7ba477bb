# bytes: literals, indexing to ints, methods, decoding, repr.
b = b"hello\x00\xff"
assert len(b) == 7 and b[0] == 104 and b[-1] == 255 and b[1:3] == b"el"
assert isinstance(b[0], int) and list(b"ab") == [97, 98]
assert repr(b) == "b'hello\\x00\\xff'" and repr(b"it's") == 'b"it\'s"'
assert repr(b"\n\t\\") == "b'\\n\\t\\\\'"
assert b"ab" + b"cd" == b"abcd" and b"ab" * 2 == b"abab"
assert b"a" in b"cat" and 97 in b"cat" and b"z" not in b"cat"
assert b"a,b".split(b",") == [b"a", b"b"] and b"-".join([b"x", b"y"]) == b"x-y"
assert b"  x ".strip() == b"x" and b"abc".upper() == b"ABC" and b"ABC".lower() == b"abc"
assert b"abc".startswith(b"ab") and b"abc".endswith(b"bc") and b"abcb".find(b"b") == 1
assert b"abcb".count(b"b") == 2 and b"abc".replace(b"b", b"B") == b"aBc"
assert b"abc".hex() == "616263" and bytes.fromhex("61 62") == b"ab"
assert "héllo".encode() == b"h\xc3\xa9llo" and b"h\xc3\xa9llo".decode() == "héllo"
assert "héllo".encode("utf-8") == "héllo".encode("utf8")
assert bytes([1, 2, 255]) == b"\x01\x02\xff" and bytes(3) == b"\x00\x00\x00"
assert bytes("ab", "ascii") == b"ab" and bytes(b"x") == b"x"
assert b"abc" < b"abd" and b"" < b"a" and b"abc" == b"abc" and b"a" != "a"
assert hash(b"abc") == hash(b"ab" + b"c") and {b"k": 1}[b"k"] == 1
assert b"abc"[::-1] == b"cba" and b"abcdef"[::2] == b"ace"
assert b"12".isdigit() and b"ab".isalpha() and b"a1".isalnum()
assert str(b"x") == "b'x'" and b"A".decode("ascii") == "A"
assert sorted(b"cab") == [97, 98, 99] and max(b"az") == 122 and sum(b"\x01\x02") == 3
try:
    b"\xff".decode("utf-8")
    assert False
except UnicodeDecodeError as e:
    assert str(e) == "'utf-8' codec can't decode byte 0xff in position 0: invalid start byte"
try:
    bytes([256])
    assert False
except ValueError as e:
    assert str(e) == "bytes must be in range(0, 256)"
try:
    b"a" + "b"
    assert False
except TypeError as e:
    assert str(e) == "can't concat str to bytes"
(b, b"", bytes(range(5)), b"\x00".hex())
# expect: (b"hello\x00\xff", b"", b"\x00\x01\x02\x03\x04", "00")
