# cella-only
# output: ""
# Refused when compiled, before anything runs: nothing is printed.
print('compiled and ran')
with ctx() as f:
    pass
# expect-error: NotImplementedError: 'with' statements are not supported
