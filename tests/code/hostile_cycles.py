# limits: memory=30000000
# 200000 reference cycles made and dropped, about 60 MB in all: under a
# 30 MB heap only a collector that frees cycles lets this finish. Cycles
# through lists, dicts and closures; self-referencing reprs.
for i in range(200000):
    a = [i, None, "x" * 50]
    b = {"peer": a, "n": i}
    a[1] = b
    def f():
        return f
keep = []
keep.append(keep)
d = {}
d["d"] = d
s = [d, keep]
(repr(keep), repr(d), repr(s), a[1]["peer"] is a)
# expect: ("[[...]]", "{'d': {...}}", "[{'d': {...}}, [[...]]]", True)
