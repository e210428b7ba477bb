# cella-only
# limits: time_ms=300
# A time limit reached inside a gathered task ends the run even with
# return_exceptions=True: the TimeoutError is never handed back as a value.
import asyncio
async def spin():
    while True:
        pass
async def main():
    n = 0
    while n < 10**7:
        await asyncio.gather(spin(), return_exceptions=True)
        n += 1
    return n
asyncio.run(main())
# expect-error: TimeoutError: time limit exceeded (300000 us)
