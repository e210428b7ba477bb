# cella-only
# functions: add
# eval is no builtin: a NameError naming it.
eval("1 + 1")
# expect-error: NameError: name 'eval' is not defined
