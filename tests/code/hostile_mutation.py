# Containers mutated while they are walked: CPython's errors, no crash, no
# endless loop.
d = {1: 1, 2: 2}
try:
    for k in d:
        d[k + 10] = 0
except RuntimeError as e:
    m1 = str(e)
s = {1, 2}
try:
    for v in s:
        s.add(v + 10)
except RuntimeError as e:
    m2 = str(e)
l = [3, 1, 2]
try:
    l.sort(key=lambda v: (l.append(v), v)[1])
except ValueError as e:
    m3 = str(e)
grow = [1]
for v in grow:
    if len(grow) < 100:
        grow.append(v + 1)
shrink = list(range(10))
for v in shrink:
    shrink.remove(v)
(m1, m2, m3, len(grow), shrink)
# expect: ("dictionary changed size during iteration", "Set changed size during iteration", "list modified during sort", 100, [1, 3, 5, 7, 9])
