# A symbol-table error CPython finds after parsing: 'return' outside a
# function.
x = 1
return x
# expect-error: SyntaxError: 'return' outside function
