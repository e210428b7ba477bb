# cella-only
# output: ""
# Refused when compiled, before anything runs: nothing is printed.
print('compiled and ran')
x = [1]
del x[0]
# expect-error: NotImplementedError: 'del' statements are not supported
