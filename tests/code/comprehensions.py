# List, dict and set comprehensions and generator expressions: several for
# and if clauses, scoping (the loop variable does not leak), laziness.
sq = [x * x for x in range(6)]
assert sq == [0, 1, 4, 9, 16, 25]
assert [x for x in range(20) if x % 3 == 0 if x % 2 == 0] == [0, 6, 12, 18]
assert [(i, j) for i in range(3) for j in range(i)] == [(1, 0), (2, 0), (2, 1)]
assert [[j for j in range(i)] for i in range(3)] == [[], [0], [0, 1]]
assert {k: v for k, v in zip("abc", range(3)) if v} == {"b": 1, "c": 2}
assert {c.lower() for c in "AbBa"} == {"a", "b"}
assert sum(x for x in range(101)) == 5050 and max(len(w) for w in ["a", "abc", "ab"]) == 3
assert list(x + 1 for x in (1, 2)) == [2, 3] and tuple(c for c in "ab") == ("a", "b")
assert any(x > 3 for x in [1, 5]) and all(x > 0 for x in [1, 2]) and not any(x for x in [])
x = "outer"
ys = [x for x in range(3)]
assert x == "outer" and ys == [0, 1, 2]
k = 10
assert [k + i for i in range(2)] == [10, 11]
matrix = [[1, 2, 3], [4, 5, 6]]
assert [[row[i] for row in matrix] for i in range(3)] == [[1, 4], [2, 5], [3, 6]]
assert [v for row in matrix for v in row if v % 2] == [1, 3, 5]
g = (i * 2 for i in range(3))
assert next(g) == 0 and list(g) == [2, 4] and list(g) == []
log = []
def noisy(v):
    log.append(v)
    return v
lazy = (noisy(i) for i in range(100))
assert next(lazy) == 0 and log == [0]
found = next((w for w in ["x", "yy", "zzz"] if len(w) == 2), None)
assert found == "yy" and next((w for w in [] if w), "none") == "none"
fns = [lambda: i for i in range(3)]
assert [f() for f in fns] == [2, 2, 2]
fns = [lambda i=i: i for i in range(3)]
assert [f() for f in fns] == [0, 1, 2]
pairs = {(a, b) for a in range(3) for b in range(3) if a < b}
assert sorted(pairs) == [(0, 1), (0, 2), (1, 2)]
words = ["apple", "bob", "kayak", "level", "code"]
pal = [w for w in words if w == w[::-1]]
by_len = {n: [w for w in words if len(w) == n] for n in sorted({len(w) for w in words})}
assert by_len == {3: ["bob"], 4: ["code"], 5: ["apple", "kayak", "level"]}
(pal, {i: i ** 2 for i in range(3)}, sorted({-x for x in range(3)}), sum(1 for _ in "abc"))
# expect: (["bob", "kayak", "level"], {0: 0, 1: 1, 2: 4}, [-2, -1, 0], 3)
