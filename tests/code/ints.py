# Integers: arithmetic, floor division and modulo signs, bit operations,
# conversions, and big ints past 64 bits.
assert 7 // 2 == 3 and -7 // 2 == -4 and 7 // -2 == -4
assert 7 % 3 == 1 and -7 % 3 == 2 and 7 % -3 == -2
assert divmod(-7, 2) == (-4, 1)
assert 2 ** 10 == 1024 and 2 ** -1 == 0.5
assert pow(3, 4, 5) == 1 and pow(2, -1, 5) == 3
assert 1 << 70 == 1180591620717411303424
assert (1 << 70) >> 68 == 4
assert -1 >> 5 == -1
assert 0b1010 & 0b0110 == 0b0010 and 0b1010 | 0b0110 == 0b1110 and 0b1010 ^ 0b0110 == 0b1100
assert ~5 == -6 and ~-1 == 0
assert 0x_ff == 255 and 0o17 == 15 and 1_000_000 == 10**6
assert int("42") == 42 and int("-0x1f", 16) == -31 and int("  7  ") == 7
assert int("0b101", 0) == 5 and int("z", 36) == 35 and int("1_000") == 1000
assert int(3.99) == 3 and int(-3.99) == -3 and int(True) == 1
assert str(-123) == "-123" and repr(10**20) == "100000000000000000000"
assert hex(255) == "0xff" and oct(8) == "0o10" and bin(-5) == "-0b101"
assert (255).bit_length() == 8 and (0).bit_length() == 0
assert abs(-9) == 9 and -(-9) == 9 and +9 == 9
assert 10 / 4 == 2.5 and 10 / 5 == 2.0 and type(10 / 5) is float

# Big ints: the boundaries of a machine word and well past them.
big = 2 ** 64
assert big - 1 == 18446744073709551615
assert (2 ** 63 - 1) + 1 == 2 ** 63
assert -(2 ** 63) - 1 == -9223372036854775809
assert 9223372036854775807 * 9223372036854775807 == 85070591730234615847396907784232501249
f100 = 1
for i in range(1, 101):
    f100 *= i
assert len(str(f100)) == 158
assert f100 % 1000000007 == 437918130
assert f100 // (f100 // 7) == 7
assert str(2 ** 200)[:10] == "1606938044" and str(2 ** 200)[-5:] == "01376"
assert (3 ** 100) % (2 ** 64) == 3 ** 100 & (2 ** 64 - 1)
assert -(10 ** 30) // 7 == -142857142857142857142857142858
assert -(10 ** 30) % 7 == 6
assert divmod(10 ** 40, -(10 ** 20 + 1))[1] == -(10 ** 20 + 1) + (10 ** 40) % (10 ** 20 + 1)
assert (1 << 200) >> 199 == 2 and (-(1 << 200)) >> 300 == -1
assert (2 ** 100) ^ (2 ** 100 - 1) == 2 ** 101 - 1
assert ~(2 ** 100) == -(2 ** 100) - 1
assert int("9" * 50) + 1 == 10 ** 50
assert hash(2 ** 70) == hash(2 ** 70)
assert 2 ** 64 > 2 ** 63 > -2 ** 64 and 2 ** 64 == 18446744073709551616.0
assert 10 ** 20 / 10 ** 10 == 1e10
assert pow(7, 10 ** 20, 13) == 9
assert max(2 ** 65, 3, -2 ** 66) == 2 ** 65
assert sorted([2 ** 65, -1, 2 ** 64]) == [-1, 2 ** 64, 2 ** 65]
(2 ** 100, -(2 ** 64), 12345678901234567890 * 98765432109876543210, 2 ** 53, 2 ** 53 + 1)
# expect: (1267650600228229401496703205376, -18446744073709551616, 1219326311370217952237463801111263526900, 9007199254740992, 9007199254740993)
