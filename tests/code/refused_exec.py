# cella-only
# functions: add
# exec is no builtin; neither is __import__.
try:
    __import__("os")
    assert False
except NameError as e:
    assert str(e) == "name '__import__' is not defined"
exec("x = 1")
# expect-error: NameError: name 'exec' is not defined
