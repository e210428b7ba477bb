# cella-only
# functions: add
# The builtins code mode refuses exist, so that calling one fails with a
# NotImplementedError naming it (not a NameError, not a host call).
out = []
for name, fn in [("compile", lambda: compile("1", "f", "eval")), ("__import__", lambda: __import__("os")),
                 ("globals", lambda: globals()), ("locals", lambda: locals()), ("vars", lambda: vars()),
                 ("input", lambda: input()), ("setattr", lambda: setattr(1, "a", 2)), ("dir", lambda: dir()),
                 ("exit", lambda: exit()), ("breakpoint", lambda: breakpoint()),
                 ("memoryview", lambda: memoryview(b""))]:
    try:
        fn()
        out.append(name + ": ran")
    except NotImplementedError as e:
        assert str(e) == f"'{name}' is not supported in code mode", str(e)
        out.append(name)
assert len(out) == 11 and all(":" not in x for x in out), out
exec("x = 1")
# expect-error: NotImplementedError: 'exec' is not supported in code mode
