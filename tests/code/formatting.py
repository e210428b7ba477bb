# f-strings (conversions, specs, nested fields, =), format(), str.format, %.
name, n, x = "Ada", 42, 3.14159
assert f"{name} is {n}" == "Ada is 42" and f"{{literal}}" == "{literal}"
assert f"{name!r}" == "'Ada'" and f"{name!s}" == "Ada" and f"{'é'!a}" == "'\\xe9'"
assert f"{x:.2f}" == "3.14" and f"{x:10.3f}" == "     3.142" and f"{x:<8.1f}|" == "3.1     |"
assert f"{n:5d}" == "   42" and f"{n:<5}|" == "42   |" and f"{n:^6}" == "  42  " and f"{n:*>6}" == "****42"
assert f"{n:05d}" == "00042" and f"{-n:05d}" == "-0042" and f"{n:+d}" == "+42" and f"{n: d}" == " 42"
assert f"{n:x}" == "2a" and f"{n:X}" == "2A" and f"{n:#x}" == "0x2a" and f"{n:o}" == "52" and f"{n:b}" == "101010"
assert f"{n:#b}" == "0b101010" and f"{255:08b}" == "11111111"
assert f"{1234567:,}" == "1,234,567" and f"{1234567:_}" == "1_234_567" and f"{1234567.891:,.2f}" == "1,234,567.89"
assert f"{0.25:%}" == "25.000000%" and f"{0.256:.1%}" == "25.6%"
assert f"{12345.678:e}" == "1.234568e+04" and f"{12345.678:.2E}" == "1.23E+04"
assert f"{0.0001234:g}" == "0.0001234" and f"{123456789.0:g}" == "1.23457e+08" and f"{1.0:g}" == "1"
assert f"{x}" == "3.14159" and f"{1e20}" == "1e+20" and f"{2.0}" == "2.0"
assert f"{'ab':>5}" == "   ab" and f"{'ab':.1}" == "a" and f"{'ab':-^6}" == "--ab--"
width, prec = 8, 2
assert f"{x:{width}.{prec}f}" == "    3.14" and f"{name:>{width}}" == "     Ada"
assert f"{n=}" == "n=42" and f"{n + 1 = }" == "n + 1 = 43" and f"{name=!s}" == "name=Ada"
assert f"{x=:.1f}" == "x=3.1"
assert f"{[1, 2]}" == "[1, 2]" and f"{ {'a': 1} }" == "{'a': 1}" and f"{(1,)}" == "(1,)"
assert f"{None}" == "None" and f"{True}" == "True" and f"{True:d}" == "1"
assert f"{'nested ' + f'{n}'}" == "nested 42"
assert f"{3:.2f}" == "3.00" and f"{-0.0:.1f}" == "-0.0" and f"{2**70}" == "1180591620717411303424"
assert f"""multi
{n}""" == "multi\n42"
assert rf"\d{n}" == "\\d42" and f"{n!r:>5}" == "   42"

assert format(42, "05d") == "00042" and format(3.5, ".0f") == "4" and format(2.5, ".0f") == "2"
assert format("s", ">3") == "  s" and format(10) == "10" and format(1.5) == "1.5"
assert "{} + {} = {}".format(1, 2, 3) == "1 + 2 = 3"
assert "{0}{1}{0}".format("a", "b") == "aba" and "{x}-{y}".format(x=1, y=2) == "1-2"
assert "{:>6.2f}".format(x) == "  3.14" and "{0[1]}".format([5, 6]) == "6"
assert "{d[k]}".format(d={"k": "v"}) == "v" and "{!r}".format("q") == "'q'"
assert "{{}} {}".format(1) == "{} 1" and "{:{}}".format("a", 3) == "a  "
assert "{:,d}".format(10 ** 9) == "1,000,000,000"

assert "%s is %d" % ("Ada", 42) == "Ada is 42" and "%5.2f" % x == " 3.14" and "%-4d|" % 7 == "7   |"
assert "%r" % "q" == "'q'" and "%x %o %X" % (255, 8, 255) == "ff 10 FF" and "%%" % () == "%"
assert "%(a)s-%(b)03d" % {"a": "k", "b": 5} == "k-005" and "%s" % [1] == "[1]"
assert "%e" % 12345.678 == "1.234568e+04" and "%g" % 0.5 == "0.5" and "%c" % 65 == "A"
assert "%s" % (1,) == "1" and "%s %s" % ("a", "b") == "a b" and "%05.1f" % -2.5 == "-02.5"
try:
    "%d" % "x"
    assert False
except TypeError as e:
    assert str(e) == "%d format: a real number is required, not str"
try:
    "%s %s" % ("a",)
    assert False
except TypeError as e:
    assert str(e) == "not enough arguments for format string"
try:
    f"{n:q}"
    assert False
except ValueError as e:
    assert str(e) == "Unknown format code 'q' for object of type 'int'"
try:
    "{} {}".format(1)
    assert False
except IndexError as e:
    assert str(e) == "Replacement index 1 out of range for positional args tuple"
try:
    "{a}".format(b=1)
    assert False
except KeyError as e:
    assert str(e) == "'a'"
items = [("apple", 1.5, 3), ("kiwi", 0.25, 12)]
lines = [f"{n:<8}{p:>6.2f}{q:>4}" for n, p, q in items]
print("\n".join(lines))
f"total: {sum(p * q for _, p, q in items):.2f}"
# expect: "total: 7.50"
