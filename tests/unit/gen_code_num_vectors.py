#!/usr/bin/python3
"""Writes test_code_num_vectors.h: operations on numbers and CPython 3.11's
answers (a repr, or "ExceptionType: message"), for test_code_num.c.
Operands are literals the test parses: ints in decimal or hex, floats as
repr, True/False, s:TEXT for a str. Run: python3 gen_code_num_vectors.py > test_code_num_vectors.h"""
import math, random, sys

def lit(v):
    if v is None:
        return "-"
    if isinstance(v, bool):
        return repr(v)
    if isinstance(v, int):
        return hex(v) if abs(v) > 10**1000 else str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, str):
        return "s:" + v
    raise TypeError(v)

OPS = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "/": lambda a, b: a / b, "//": lambda a, b: a // b, "%": lambda a, b: a % b,
    "**": lambda a, b: a ** b, "<<": lambda a, b: a << b, ">>": lambda a, b: a >> b,
    "&": lambda a, b: a & b, "|": lambda a, b: a | b, "^": lambda a, b: a ^ b,
    "divmod": divmod, "round": lambda a, b=None: round(a, b) if b is not None else round(a),
    "pow3": lambda a, b, c: pow(a, b, c),
    "cmp": lambda a, b: "".join("T" if x else "F" for x in (a < b, a <= b, a == b, a != b, a > b, a >= b)),
    "hash": lambda a: hash(a), "repr": lambda a: a, "neg": lambda a: -a, "pos": lambda a: +a,
    "inv": lambda a: ~a, "abs": abs, "bool": lambda a: bool(a),
    "int": lambda a, b=None: int(a) if b is None else int(a, b), "float": float,
    "hex": hex, "bin": bin, "oct": oct,
    "bit_length": lambda a: a.bit_length(), "bit_count": lambda a: a.bit_count(),
    "as_integer_ratio": lambda a: a.as_integer_ratio(), "is_integer": lambda a: a.is_integer(),
    "fhex": lambda a: a.hex(), "fromhex": lambda a: float.fromhex(a),
    "to_bytes": lambda a, n, o: a.to_bytes(n, o, signed=a < 0),
}

def answer(op, args):
    try:
        r = getattr(math, op[2:])(*args) if op.startswith("m.") else OPS[op](*args)
    except Exception as e:
        return f"{type(e).__name__}: {e}"
    if isinstance(r, complex):
        # no complex numbers in cella: a negative base to a fractional power
        return "ValueError: negative number cannot be raised to a fractional power"
    if op == "hash":
        return str(r)
    return repr(r)

cases = []
def add(op, *args):
    if op == "hash" and any(isinstance(a, float) and a != a for a in args):
        return       # nan hashes by identity
    cases.append((op, [lit(a) for a in args], answer(op, args)))

big = [0, 1, -1, 2, -2, 7, -7, 10, 2**31, 2**32 - 1, 2**32, -2**32, 2**61 - 1, 2**61, -2**61,
       -2**61 - 1, 2**62, 2**63 - 1, 2**63, -2**63, 2**64 - 1, 2**64, 2**64 + 1, 10**20, -10**20,
       2**100, -2**100, 3**80, -(3**80), 10**40 + 7, 2**128 - 1]
flts = [0.0, -0.0, 1.0, -1.0, 0.5, 1.5, 2.5, -2.5, 0.1, 1e16, 1e-7, 3.14159, -7.5, 1e308,
        float("inf"), float("-inf"), float("nan"), 2.0**53, 2.0**53 + 2, 1e22, 5e-324]
binops = ["+", "-", "*", "/", "//", "%", "**", "<<", ">>", "&", "|", "^", "divmod", "cmp"]

for a in big:
    for b in big:
        for op in binops:
            if op == "**" and abs(b) > 200:
                continue
            if op in ("<<",) and abs(b) > 4000:
                continue
            add(op, a, b)
    for op in ("hash", "repr", "neg", "pos", "inv", "abs", "bool", "hex", "bin", "oct",
               "bit_length", "bit_count", "as_integer_ratio", "float"):
        add(op, a)
for a in flts:
    for b in flts + [0, 1, -1, 3, 2**53 + 1, 10**400, -10**400, True]:
        for op in ("+", "-", "*", "/", "//", "%", "**", "divmod", "cmp"):
            add(op, a, b)
            if not isinstance(b, float):
                add(op, b, a)
    for op in ("hash", "repr", "neg", "abs", "bool", "int", "as_integer_ratio", "is_integer",
               "fhex", "round"):
        add(op, a)
for x in (True, False):
    for y in (True, False, 1, 2.5):
        for op in ("+", "-", "*", "&", "|", "^", "<<", "//", "cmp"):
            add(op, x, y)
    for op in ("hash", "repr", "neg", "inv", "abs", "int"):
        add(op, x)

rnd0 = random.Random(80)

# rounding
for x in (2.5, 3.5, -2.5, 0.125, 0.375, 2.675, 1.005, 12345.0, 250.0, 350.0, 5.5e20, 1e300,
          1e-300, -0.0, 1.7976931348623157e308, 0.5, -0.5, 1234.5678, 9.995, 99.5):
    for nd in (None, 0, 1, 2, 3, -1, -2, -3, -20, -308, -309, 323, 400):
        add("round", x, nd)
for x in (1234, 1250, -1250, 1350, 25, -15, 5, 10**30 + 5 * 10**9, 12345678901234567890, 0):
    for nd in (None, 0, 2, -1, -2, -10, -40):
        add("round", x, nd)

# strings
for s in ("0", "12", " 12 ", "-12", "+12", "1_000", "1__0", "_1", "1_", "0x1f", "0X1F", "0b101",
          "0o17", "010", "00", "0_0", "x", "", " ", "+ 5", "99999999999999999999999",
          "-0x_1f", "0x", "1e5", "12\n", "\t-7\t", "\u0663", "\u0661\u0662", "\uff11\uff12",
          "\u3000 42\u2003", "\u096710", "1\u00e9", "\u00a0-5\u00a0", "\u0e51_\u0e52"):
    for base in (None, 0, 10, 16, 2, 36, 1, 37):
        add("int", s, base)
for s in ("1.5", " -2.5 ", "nan", "-nan", "inf", "-Infinity", "INF", "1e5", "1E-5", "1_0.5",
          "1._5", "1_", "_1", ".5", "1.", ".", "1e", "x", "", "0x1p3", "nan_", "1e1_0", "1e400",
          "-0.0", "4.9e-324", "2.4e-324", "\u0661.\u0665", "\u2003-1e\u0663 ", "1\u00e9"):
    add("float", s)
for s in ("0x1.8p1", "1.8p1", "-0x1p-1074", "0x1p-1075", "0x1.fffffffffffff8p1023",
          "0x1p1024", "x", "0x.8", "inf", "0x1.000000000000080000000001p0", " 0x10 "):
    add("fromhex", s)
for s in ("0" * 4300 + "1", "0" * 4299 + "1", "1_" * 3000 + "1", " " * 5000 + "7", "f" * 1000,
          "\u00e9" * 300, "'" * 300):
    for base in (None, 16):
        add("int", s, base)
for a in (5, 255, 256, -1, -128, -129, 2**100):
    for n in (0, 1, 2, 16):
        for o in ("big", "little"):
            add("to_bytes", a, n, o)

# pow with modulus
for a, b, c in ((2, 10, 1000), (3, -1, 7), (2, -1, 4), (2, 1, 0), (5, 3, -7), (2**100, 2**50, 10**9 + 7),
                (-3, 5, 11), (7, 0, 1), (7, 0, -1), (3, -2, 10**20 + 39), (2.0, 1, 3), (12, 0, 5)):
    add("pow3", a, b, c)

# the math module
margs = [0, 1, -1, 2, 0.5, -0.5, 1.5, 3.0, -2.5, 10, 100.0, 1e-300, 1e300, 710.0, -710.0,
         float("inf"), float("-inf"), float("nan"), 2**1100, -2**1100, 10**30, True]
for f in ("sqrt", "exp", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin",
          "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc",
          "fabs", "degrees", "radians", "floor", "ceil", "trunc", "isnan",
          "isinf", "isfinite", "modf", "frexp", "exp2", "cbrt"):
    for x in margs:
        add("m." + f, x)
for x in margs:
    add("m.ulp", x)
for f in ("pow", "atan2", "copysign", "fmod", "remainder", "log", "hypot", "ldexp", "isclose",
          "nextafter"):
    for x in margs[:18]:
        for y in (0, 1, -1, 2, 0.5, -2.5, 1e300, float("inf"), float("-inf"), float("nan"), 10**30):
            if f == "ldexp" and not isinstance(y, int):
                continue
            add("m." + f, x, y)
ints = [0, 1, -1, 6, 12, -18, 100, 2**70, -(3**50), 5.0, True]
for f in ("gcd", "lcm", "comb", "perm"):
    for x in ints:
        for y in ints:
            if f in ("comb", "perm") and isinstance(x, int) and isinstance(y, int) and x > 1000:
                continue
            add("m." + f, x, y)
# CPython's own gamma and lgamma (not libm's), to the last bit
for x in (0, -0.0, -1, -2.0, 1, 2, 5, 10.0, 23, 24, 171, 172, 200.5, -200.5, 1e-25, -1e-25,
          float("inf"), float("-inf"), float("nan"), 1e308, 0.5, -0.5, 1.5, -2.5, 3.7, 139.9,
          140.1, -140.1, 4.99, 5.01, 5.5, 100.0, -170.5, -171.5):
    add("m.gamma", x)
    add("m.lgamma", x)
for f in ("factorial", "isqrt"):
    for x in ints + [200, 10**40 + 12345, 2**64 - 1, 2**64]:
        if f == "factorial" and isinstance(x, int) and x > 1000:
            continue
        add("m." + f, x)

# random strings for int(), float() and float.fromhex()
alpha = "0123456789abcdefxXoObB_.eE+-pP \tnaifty"
for _ in range(700):
    t = "".join(rnd0.choice(alpha) for _ in range(rnd0.randrange(0, 9)))
    add("int", t, rnd0.choice((None, 0, 2, 8, 10, 16, 36)))
    add("float", t)
    add("fromhex", t)

# random big operands: schoolbook and Karatsuba products, Knuth division
rnd = random.Random(8)
for _ in range(14):
    da, db = rnd.choice((5, 30, 100, 480, 700, 1100, 2100)), rnd.choice((3, 25, 90, 470, 690, 2000))
    a = rnd.randrange(10**(da - 1), 10**da) * rnd.choice((1, -1))
    b = rnd.randrange(10**(db - 1), 10**db) * rnd.choice((1, -1))
    for op in ("+", "-", "//", "%", "&", "|", "^", "cmp", "/"):
        add(op, a, b)
    if da + db < 4200:
        add("*", a, b)
    add(">>", a, rnd.randrange(0, 3000))
    add("hash", a)
for _ in range(40):
    # divisors whose top limbs make Knuth's estimate wrong: near powers of 2^32
    b = (2**(32 * rnd.randrange(2, 12)) - rnd.randrange(1, 1000)) * rnd.choice((1, -1))
    a = rnd.randrange(2**(32 * 20)) * rnd.choice((1, -1))
    add("//", a, b)
    add("%", a, b)
    add("*", a, b)

w = sys.stdout.write
w("/* Generated by gen_code_num_vectors.py from CPython %s: do not edit. */\n" % sys.version.split()[0])
w("static const struct num_case num_cases[] = {\n")
def cstr(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t") + '"'
for op, args, exp in cases:
    args = args + ["-"] * (3 - len(args))
    # None arguments (round's ndigits, int's base) are "-": absent
    args = ["-" if x == "None" else x for x in args]
    w("    {%s, {%s}, %s},\n" % (cstr(op), ", ".join(cstr(x) for x in args), cstr(exp)))
w("};\n")
