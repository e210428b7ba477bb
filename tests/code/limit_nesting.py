# cella-only
# limits: nesting=20
# A lower parser nesting limit: SyntaxError, before anything runs.
x = [[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]
# expect-error: SyntaxError
