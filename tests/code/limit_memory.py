# cella-only
# limits: memory=10000000
# A list that outgrows a 10 MB heap: MemoryError.
small = [0] * 1000
big = []
while True:
    big.append([0] * 1000)
# expect-error: MemoryError
