# cella-only
# A MemoryError from an oversized result can be caught; the run goes on.
results = []
for expr in ("pow", "shift", "mul"):
    try:
        if expr == "pow":
            v = 7 ** (10 ** 12)
        elif expr == "shift":
            v = 1 << (10 ** 12)
        else:
            s = "ab" * (10 ** 12)
        results.append("computed")
    except MemoryError:
        results.append(expr)
results
# expect: ["pow", "shift", "mul"]
