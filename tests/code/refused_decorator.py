# cella-only
# output: ""
# Refused when compiled, before anything runs: nothing is printed.
print('compiled and ran')
def deco(f):
    return f
@deco
def g():
    pass
# expect-error: NotImplementedError: decorators are not supported
