def fib(n: int) -> int:
    if n < 2:
        return n
    elif n == 2:
        return 1
    else:
        return fib(n - 1) + fib(n - 2)

def kw(a, b=2, /, c=3, *args, d, e=5, **kwargs):
    global G
    G = a
    def inner():
        nonlocal a
        a += 1
        return a
    return inner()

total = 0
for i, v in enumerate([1, 2, 3]):
    if v == 2:
        continue
    total += v
else:
    total = -total
while total < 100:
    total *= 2
    if total > 50:
        break
else:
    pass
try:
    assert total > 0, "positive"
    raise ValueError("bad") from None
except (ValueError, KeyError) as e:
    err = str(e)
except Exception:
    raise
else:
    pass
finally:
    done = True

async def main(urls):
    results = await asyncio.gather(*[fetch(u) for u in urls])
    return [await r for r in results]
fib(25)
