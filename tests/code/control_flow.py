# if/elif/else, for/while with else, break, continue, pass, nested loops,
# the loop variable after the loop, comparison chains, conditional expressions.
def classify(n):
    if n < 0:
        return "neg"
    elif n == 0:
        return "zero"
    elif n < 10:
        return "small"
    else:
        return "big"
assert [classify(v) for v in (-5, 0, 3, 50)] == ["neg", "zero", "small", "big"]
def find(items, target):
    for i, v in enumerate(items):
        if v == target:
            break
    else:
        return -1
    return i
assert find([4, 5, 6], 6) == 2 and find([4, 5], 9) == -1 and find([], 1) == -1
n, steps = 27, 0
while n != 1:
    n = n // 2 if n % 2 == 0 else 3 * n + 1
    steps += 1
else:
    done = True
assert steps == 111 and done
k = 0
while True:
    k += 1
    if k < 5:
        continue
    if k == 7:
        break
else:
    raise AssertionError("while-else must not run after break")
assert k == 7
evens = []
for i in range(10):
    if i % 2:
        continue
    evens.append(i)
assert evens == [0, 2, 4, 6, 8] and i == 9
primes = []
for cand in range(2, 30):
    for dv in range(2, cand):
        if cand % dv == 0:
            break
    else:
        primes.append(cand)
assert primes == [2, 3, 5, 7, 11, 13, 17, 19, 23, 29]
for j in []:
    pass
else:
    empty_else = "ran"
assert empty_else == "ran"
x = 5
assert 1 < x < 10 and not (1 < x > 10) and 1 < x != 4 and (0 <= x <= 5) and 5 == x == 5.0
calls = []
def v(n):
    calls.append(n)
    return n
assert not (v(3) < v(2) < v(1)) and calls == [3, 2]
out = []
for a in range(3):
    for b in range(3):
        if b > a:
            break
        if a == b:
            continue
        out.append((a, b))
assert out == [(1, 0), (2, 0), (2, 1)]
total = 0
for ch in "a1b22c333":
    if ch.isdigit():
        total += int(ch)
    elif ch == "b":
        pass
    else:
        total += 100
assert total == 214
label = "even" if x % 2 == 0 else "odd" if x % 3 else "three"
assert label == "odd"
count = 0
while count < 3:
    count += 1
    if count == 10:
        break
else:
    count *= 10
assert count == 30
i = 0
result = []
while i < 10:
    i += 1
    if i % 3 == 0:
        continue
    if i > 7:
        break
    result.append(i)
for letter in "xyz":
    print(letter, end=" ")
print()
(result, i, steps)
# expect: ([1, 2, 4, 5, 7], 8, 111)
