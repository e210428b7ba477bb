# nonlocal without an enclosing binding: CPython's compiler refuses it.
def f():
    def g():
        nonlocal missing
        missing = 1
    return g
# expect-error: SyntaxError: no binding for nonlocal 'missing' found
