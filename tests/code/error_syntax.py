# A syntax error: reported before anything runs, with its line.
print("never printed")
x = 1
if x == 1
    y = 2
# expect-error: SyntaxError: expected ':'
