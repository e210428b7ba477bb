# cella-only
# output: "start\n"
# 10**10**10 would need 4 GB and minutes: its size is known before it is
# computed, so MemoryError comes at once, under the default limits.
print("start")
x = 10 ** 10 ** 10
# expect-error: MemoryError
