# cella-only
# output: ""
# Refused when compiled, before anything runs: nothing is printed.
print('compiled and ran')
async def f(xs):
    async for x in xs:
        pass
# expect-error: NotImplementedError: 'async for' is not supported
