# An uncaught TypeError ends the run with CPython's message and line.
x = 1
y = "2"
print("about to add")
x + y
# expect-error: TypeError: unsupported operand type(s) for +: 'int' and 'str'
