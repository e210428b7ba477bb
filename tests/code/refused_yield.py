# cella-only
# output: ""
# Refused when compiled, before anything runs: nothing is printed.
print('compiled and ran')
def gen():
    yield 1
# expect-error: NotImplementedError: 'yield' is not supported (generators are not part of code mode)
