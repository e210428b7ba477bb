import json, math as m
from datetime import datetime, timedelta as td
x = 1 + 2 * 3 ** -4 // 5 % 6 - (7 << 1 >> 2 | 8 & 9 ^ ~10)
a, *b = [1, 2, 3]
d = {'k': [1, 2.5, 1e-3, 0x_ff, 0o17, 0b101, 1_000], **other}
s = {1, 2, *t}
y: int = 0
y += 1; y -= 1; y *= 2; y /= 2; y //= 1; y %= 3; y **= 2; y &= 1; y |= 2; y ^= 3; y <<= 1; y >>= 1
z = x if x > 0 else -x
ok = a < b <= c == d != e > f >= g and h in i or j not in k and l is m and n is not o or not p
f = lambda p, *q, r=1, **s: p + r
sq = [i * i for i in range(10) if i % 2 if i > 3 for j in range(i)]
gen = sum(v for v in sq)
dc = {k: v for k, v in d.items()}
sc = {c for c in "abc"}
sl = sq[1:2], sq[::2], sq[:-1], sq[1:2:3], sq[:, 1]
w = (n := 10)
print(*sq, sep=", ", end="\n")
result = json.dumps({"x": x, "dt": datetime(2020, 1, 1).isoformat()})
result
