# cella-only
# functions: add
# eval is refused: NotImplementedError naming it.
eval("1 + 1")
# expect-error: NotImplementedError: 'eval' is not supported in code mode
