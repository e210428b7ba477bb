# cella-only
# functions: add
# limits: calls=5
# More host calls than allowed: RuntimeError naming the limit.
total = 0
for i in range(10):
    total = add(total, i)
# expect-error: RuntimeError
