# functions: fetch,fetch_len,slow_add,afail,add
# async def, await of host calls, asyncio.gather (several calls pending at
# once: the results keep the order of the awaitables), exceptions through
# gather, sync host calls outside the coroutines.
import asyncio
URLS = ["https://example.com/a", "https://example.com/b", "https://example.com/c"]
async def one(url):
    body = await fetch(url)
    return url[-1], len(body)
async def local_only(x):
    return x * 2
async def main():
    first = await fetch(URLS[0])
    assert first == "alpha"
    lengths = await asyncio.gather(*[fetch_len(u) for u in URLS])
    assert lengths == [5, 11, 23]
    pairs = await asyncio.gather(one(URLS[2]), one(URLS[0]), slow_add(1, 2), local_only(4))
    assert pairs == [("c", 23), ("a", 5), 3, 8]
    try:
        await asyncio.gather(fetch(URLS[1]), afail("gather failed"))
        assert False
    except ValueError as e:
        assert str(e) == "gather failed"
    try:
        await fetch("https://example.com/missing")
        assert False
    except ValueError as e:
        assert str(e) == "404: https://example.com/missing"
    mixed = await asyncio.gather(slow_add(1, 2), afail("kept"), local_only(3), return_exceptions=True)
    assert [type(v).__name__ if isinstance(v, Exception) else v for v in mixed] == [3, "ValueError", 6]
    assert str(mixed[1]) == "kept"
    await asyncio.sleep(0)
    sums = []
    for i in range(3):
        sums.append(await slow_add(i, 10))
    assert sums == [10, 11, 12]
    many = await asyncio.gather(*[slow_add(i, i) for i in range(20)])
    assert many == [2 * i for i in range(20)]
    return {"first": first, "lengths": lengths, "empty": await asyncio.gather()}
before = add(1, 1)
result = asyncio.run(main())
print("done", before)
result
# expect: {"first": "alpha", "lengths": [5, 11, 23], "empty": []}
