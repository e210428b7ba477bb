# def: defaults (evaluated once), *args, **kwargs, keyword-only,
# positional-only, closures, lambda, global, nonlocal, recursion, functions
# as values, and the TypeErrors of bad calls.
def f(a, b=2, *args, c, d=4, **kw):
    return (a, b, args, c, d, kw)
assert f(1, c=3) == (1, 2, (), 3, 4, {})
assert f(1, 5, 6, 7, c=3, e=8) == (1, 5, (6, 7), 3, 4, {"e": 8})
assert f(c=0, a=9) == (9, 2, (), 0, 4, {})
def po(a, b, /, c, *, d):
    return a + b + c + d
assert po(1, 2, 3, d=4) == 10 and po(1, 2, c=3, d=4) == 10
def collect(*args, **kwargs):
    return args, kwargs
assert collect() == ((), {}) and collect(1, x=2) == ((1,), {"x": 2})
def po_kw(a, /, **kw):
    return a, kw
assert po_kw(1, a=2) == (1, {"a": 2})
def append_to(x, acc=[]):
    acc.append(x)
    return acc
assert append_to(1) == [1] and append_to(2) == [1, 2]
def safer(x, acc=None):
    acc = [] if acc is None else acc
    acc.append(x)
    return acc
assert safer(1) == [1] and safer(2) == [2]
def make_counter(start=0):
    count = start
    def inc(step=1):
        nonlocal count
        count += step
        return count
    return inc
c1, c2 = make_counter(), make_counter(100)
assert c1() == 1 and c1() == 2 and c2(5) == 105 and c1() == 3
def outer():
    x = "enclosing"
    def mid():
        def inner():
            return x
        return inner()
    x = "changed"
    return mid()
assert outer() == "changed"
total = 0
def add_global(n):
    global total
    total += n
add_global(5)
add_global(6)
assert total == 11
def make_global():
    global created
    created = "yes"
make_global()
assert created == "yes"
def fact(n):
    return 1 if n <= 1 else n * fact(n - 1)
assert fact(20) == 2432902008176640000 and fact(30) == 265252859812191058636308480000000
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
assert [fib(i) for i in range(10)] == [0, 1, 1, 2, 3, 5, 8, 13, 21, 34]
def is_even(n):
    return True if n == 0 else is_odd(n - 1)
def is_odd(n):
    return False if n == 0 else is_even(n - 1)
assert is_even(200) and not is_odd(200)
def depth(n):
    return 0 if n == 0 else 1 + depth(n - 1)
assert depth(400) == 400
square = lambda x: x * x
assert square(7) == 49 and (lambda *a, **k: (a, k))(1, z=2) == ((1,), {"z": 2})
assert (lambda x, y=10: x + y)(1) == 11 and list(map(lambda s: s[::-1], ["ab"])) == ["ba"]
compose = lambda f, g: lambda x: f(g(x))
assert compose(square, lambda x: x + 1)(3) == 16
ops = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b}
assert ops["mul"](6, 7) == 42
def apply(fn, *a, **k):
    return fn(*a, **k)
assert apply(f, 1, c=2)[3] == 2 and apply(max, [3, 9, 1]) == 9
def no_return():
    pass
assert no_return() is None
def early(x):
    if x:
        return "early"
    return
assert early(1) == "early" and early(0) is None
def multi():
    return 1, [2], "three"
one, two, three = multi()
assert two == [2]
assert f.__name__ == "f" and square.__name__ == "<lambda>" and callable(f) and not callable(1)
def doc():
    "a docstring"
    return 1
assert doc() == 1
def shadow(len):
    return len
assert shadow(3) == 3 and len("ab") == 2
def uses_later():
    return later_defined()
def later_defined():
    return "found"
assert uses_later() == "found"
def annotated(a: int, b: "str" = "x") -> list:
    return [a, b]
assert annotated(1) == [1, "x"]
def unbound():
    y = zz
    zz = 1
    return y
try:
    unbound()
    assert False
except UnboundLocalError as e:
    assert str(e) == "cannot access local variable 'zz' where it is not associated with a value"
def errs():
    msgs = []
    for call in (lambda: f(), lambda: f(1, c=1, a=2), lambda: po(1, b=2, c=3, d=4),
                 lambda: po(1, 2, 3, 4), lambda: square(1, 2), lambda: no_return(x=1)):
        try:
            call()
        except TypeError as e:
            msgs.append(str(e))
    return msgs
assert errs() == [
    "f() missing 1 required positional argument: 'a'",
    "f() got multiple values for argument 'a'",
    "po() got some positional-only arguments passed as keyword arguments: 'b'",
    "po() takes 3 positional arguments but 4 were given",
    "<lambda>() takes 1 positional argument but 2 were given",
    "no_return() got an unexpected keyword argument 'x'",
]
try:
    f(1)
    assert False
except TypeError as e:
    assert str(e) == "f() missing 1 required keyword-only argument: 'c'"
not_fn = "str"
try:
    not_fn()
    assert False
except TypeError as e:
    assert str(e) == "'str' object is not callable"
(fact(5), c1(10), total, [g(2) for g in (square, fact, fib)])
# expect: (120, 13, 11, [4, 2, 1])
