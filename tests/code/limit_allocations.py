# cella-only
# limits: allocations=10000
# More allocations than allowed: MemoryError.
keep = []
for i in range(100000):
    keep.append(str(i))
# expect-error: MemoryError
