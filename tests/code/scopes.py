# Scopes: module globals read in functions, global/nonlocal writes, a
# builtin shadowed at module level and in a function, closures capturing
# cells (late binding), lambda defaults, names of comprehensions.
counter = 0
def bump():
    global counter
    counter += 1
    return counter
bump(); bump()
assert counter == 2
def reads_global():
    return counter * 10
assert reads_global() == 20
def outer():
    a = 1
    def middle():
        nonlocal a
        a += 1
        def inner():
            nonlocal a
            a *= 10
            return a
        return inner()
    r = middle()
    return a, r
assert outer() == (20, 20)
def shadow_builtin():
    max = lambda *args: "mine"
    return max(1, 2)
assert shadow_builtin() == "mine" and max(1, 2) == 2
sum = lambda xs: "module sum"
assert sum([1]) == "module sum"
def uses_module_sum():
    return sum([1, 2])
assert uses_module_sum() == "module sum"
adders = []
for i in range(3):
    adders.append(lambda x: x + i)
assert [f(10) for f in adders] == [12, 12, 12]
def make_adders():
    return [lambda x, i=i: x + i for i in range(3)]
assert [f(10) for f in make_adders()] == [10, 11, 12]
def cell_after_def():
    def get():
        return value
    value = "late"
    return get()
assert cell_after_def() == "late"
def counter_factory():
    counts = {"n": 0}
    def inc():
        counts["n"] += 1
        return counts["n"]
    return inc
inc = counter_factory()
inc(); inc()
assert inc() == 3
x = "global x"
def local_x():
    x = "local x"
    return x
assert local_x() == "local x" and x == "global x"
def comp_scope():
    y = 5
    return [y * k for k in range(3)]
assert comp_scope() == [0, 5, 10]
def rebinding_global_in_loop():
    global total_g
    total_g = 0
    for k in range(4):
        total_g += k
rebinding_global_in_loop()
def unbound_nonlocal_write():
    v = 0
    def f():
        nonlocal v
        v = "set by f"
    f()
    return v
(counter, total_g, unbound_nonlocal_write(), outer())
# expect: (2, 6, "set by f", (20, 20))
