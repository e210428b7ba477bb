# Operators: precedence, identity and membership, mixed int/float/bool
# arithmetic, comparisons across types, and the TypeErrors of bad operands.
assert 2 + 3 * 4 ** 2 == 50 and (2 + 3) * 4 == 20 and -2 ** 2 == -4 and (-2) ** 2 == 4
assert 2 ** 3 ** 2 == 512 and 10 - 4 - 3 == 3 and 100 / 10 / 5 == 2.0 and 7 // 2 * 2 == 6
assert 1 + 2 << 1 == 6 and 1 | 2 ^ 3 & 4 == 3 and ~0 + 1 == 0 and not 1 == 2
assert (True or False and False) is True and (not True or True) is True
assert 1 + True == 2 and 1.5 + True == 2.5 and 3 * 0.5 == 1.5 and 2 ** 0.5 > 1.41
assert 3 == 3.0 and 3 != "3" and 1 != None and [] != () and {} != [] and 0 == False
assert 1 < 2.5 and -1 < True and 2.0 > False
a = [1]
b = a
c = [1]
assert a is b and a is not c and a == c and None is None
assert 1 in [1, 2] and "k" in {"k": 0} and 3 not in {1: 3} and "ab" in "cabd" and 1 in {1.0}
assert (1, 2) in {(1, 2): 0} and [1] in [[1]]
assert -7 % 3 == 2 and 7 % -3 == -2 and -7 // 3 == -3 and 7.5 // 2 == 3.0
assert abs(-0) == 0 and -0.0 == 0.0 and +True == 1
assert "a" * 3 + "b" == "aaab" and [0] * 2 + [1] == [0, 0, 1]
assert (1 if 0 else 2 if 0 else 3) == 3 and (lambda: 1 or 2)() == 1
def err(fn):
    try:
        fn()
    except TypeError as e:
        return str(e)
assert err(lambda: 1 < "a") == "'<' not supported between instances of 'int' and 'str'"
assert err(lambda: [1] < (1,)) == "'<' not supported between instances of 'list' and 'tuple'"
assert err(lambda: None > 1) == "'>' not supported between instances of 'NoneType' and 'int'"
assert err(lambda: {} <= {}) == "'<=' not supported between instances of 'dict' and 'dict'"
assert err(lambda: [1] + (1,)) == 'can only concatenate list (not "tuple") to list'
assert err(lambda: 1 + None) == "unsupported operand type(s) for +: 'int' and 'NoneType'"
assert err(lambda: "a" - "b") == "unsupported operand type(s) for -: 'str' and 'str'"
assert err(lambda: [1] * 1.5) == "can't multiply sequence by non-int of type 'float'"
assert err(lambda: -"a") == "bad operand type for unary -: 'str'"
assert err(lambda: ~1.5) == "bad operand type for unary ~: 'float'"
assert err(lambda: 1 in 5) == "argument of type 'int' is not iterable"
assert err(lambda: 2 ** "x") == "unsupported operand type(s) for ** or pow(): 'int' and 'str'"
assert err(lambda: {1} + {2}) == "unsupported operand type(s) for +: 'set' and 'set'"
assert err(lambda: 1.5 << 1) == "unsupported operand type(s) for <<: 'float' and 'int'"
try:
    1 << -1
except ValueError as e:
    assert str(e) == "negative shift count"
(7 // 2, -7 // 2, 7 % 3, -7 % 3, 2 ** -2, 1 / 4, 10 ** 18 + 1, 0.1 * 3)
# expect: (3, -4, 1, 2, 0.25, 0.25, 1000000000000000001, 0.30000000000000004)
