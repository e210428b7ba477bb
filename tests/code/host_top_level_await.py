# functions: fetch,slow_add
# top-level-await
# Top-level await (Monty's style; CPython with PyCF_ALLOW_TOP_LEVEL_AWAIT).
import asyncio
a = await fetch("https://example.com/a")
both = await asyncio.gather(fetch("https://example.com/b"), slow_add(20, 22))
(a, both)
# expect: ("alpha", ["bravo bravo", 42])
