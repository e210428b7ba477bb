# cella-only
# limits: memory=10000000
# Doubling a string past a 10 MB heap: MemoryError at once, not when the
# machine runs out.
s = "x"
for i in range(40):
    s = s + s
# expect-error: MemoryError
