# functions: add,get_user,identity
# Many host calls with live state between them (closures, nested lists and
# dicts, a reference cycle, a running loop, a pending exception handler,
# big ints, output): the dump/load mode takes the run to a new process at
# every call, so all of it must come back as it was.
def make_acc():
    seen = []
    def acc(v):
        seen.append(v)
        return len(seen)
    return acc, seen
acc, seen = make_acc()
cyc = {"name": "cycle"}
cyc["self"] = cyc
big = 3 ** 200
total = 0
for i in range(12):
    total = add(total, i)
    acc(identity(i * i))
    if i % 4 == 0:
        print("step", i, total)
try:
    for j in range(3):
        u = get_user(j)
        if j == 2:
            raise KeyError(u["name"])
except KeyError as e:
    caught = str(e)
assert cyc["self"]["self"] is cyc and big == identity(3 ** 200)
(total, seen[-3:], caught, acc(0), len(repr(cyc)))
# expect: (66, [81, 100, 121], "'user2'", 13, 32)
