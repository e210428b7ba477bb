# functions: slow_add,fetch
# asyncio beyond plain gather: a gather awaited inside a gather, a
# coroutine awaited after the gather that ran beside it.
import asyncio
async def local_only(x):
    return x * 2
async def main():
    nested = await asyncio.gather(asyncio.gather(slow_add(1, 1), slow_add(2, 2)), local_only(1))
    assert nested == [[2, 4], 2]
    pair = await asyncio.gather(fetch("https://example.com/a"), asyncio.gather(slow_add(0, 1)))
    return nested, pair
asyncio.run(main())
# expect: ([[2, 4], 2], ["alpha", [1]])
