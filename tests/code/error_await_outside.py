# functions: fetch
# await at module level without --top-level-await: CPython's SyntaxError,
# before anything runs.
print("never printed")
page = await fetch("https://example.com/a")
# expect-error: SyntaxError: 'await' outside function
