# cella-only
# output: ""
# Refused when compiled, before anything runs: nothing is printed.
print('compiled and ran')
a = 1
b = a @ a
# expect-error: NotImplementedError: the '@' operator (matrix multiplication) is not supported
