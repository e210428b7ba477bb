# cella-only
# limits: time_ms=300
# Comparing two shared structures takes 2**80 steps with no Python loop
# and no allocation: the nested comparison reads the clock.
a = []
b = []
for i in range(80):
    a = [a, a]
    b = [b, b]
a == b
# expect-error: TimeoutError: time limit exceeded (300000 us)
