# Floats: arithmetic, repr (shortest round-trip), rounding, special values.
assert 0.1 + 0.2 == 0.30000000000000004
assert repr(0.1) == "0.1" and repr(1.0) == "1.0" and repr(1e16) == "1e+16"
assert repr(1e-5) == "1e-05" and repr(123456789012345678.0) == "1.2345678901234568e+17"
assert str(2.5) == "2.5" and repr(-0.0) == "-0.0"
assert 7.0 // 2 == 3.0 and -7.0 // 2 == -4.0 and 7.5 % 2 == 1.5 and -7.5 % 2 == 0.5
assert divmod(7.5, 2) == (3.0, 1.5)
assert 2 ** 0.5 == 1.4142135623730951 and 4 ** 0.5 == 2.0
assert float("1.5") == 1.5 and float("  -2e3 ") == -2000.0 and float(3) == 3.0
assert float("inf") > 10 ** 300 and float("-inf") < -10 ** 300
nan = float("nan")
assert nan != nan and not (nan < 1) and not (nan > 1)
assert round(2.5) == 2 and round(3.5) == 4 and round(-2.5) == -2
assert round(2.675, 2) == 2.67 and round(1234.5678, -2) == 1200.0
assert type(round(2.5)) is int and type(round(2.5, 0)) is float
assert int(1e20) == 100000000000000000000
assert (1.5).is_integer() is False and (2.0).is_integer() is True
assert 1 == 1.0 and hash(1) == hash(1.0) and {1: "a"}[1.0] == "a"
assert 1 < 1.5 < 2 and 2 ** 64 > 1.8e19
assert abs(-3.5) == 3.5 and -(1.5) == -1.5
assert 3 * 1.5 == 4.5 and 1 / 3 == 0.3333333333333333
assert sum([0.1] * 10) == 0.9999999999999999
assert max(1, 2.5) == 2.5 and min(-1.0, 0) == -1.0
assert float("1e400") == float("inf")
assert str(1e22) == "1e+22" and str(1e21) == "1e+21" and str(123456.0) == "123456.0"
assert str(0.000123) == "0.000123" and str(1.0e-4) == "0.0001"
assert 5e-324 > 0 and 5e-324 / 2 == 0.0
try:
    1.0 / 0
    assert False
except ZeroDivisionError as e:
    assert str(e) == "float division by zero"
try:
    int(float("inf"))
    assert False
except OverflowError as e:
    assert str(e) == "cannot convert float infinity to integer"
try:
    int(nan)
    assert False
except ValueError as e:
    assert str(e) == "cannot convert float NaN to integer"
try:
    float("abc")
    assert False
except ValueError as e:
    assert str(e) == "could not convert string to float: 'abc'"
try:
    2.0 ** 10000
    assert False
except OverflowError as e:
    assert str(e) == "(34, 'Numerical result out of range')"
[1.5, -0.0, 1e308 * 10, 3.0, 1 / 8]
# expect: [1.5, -0.0, float("inf"), 3.0, 0.125]
