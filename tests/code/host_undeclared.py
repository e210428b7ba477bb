# With no functions declared, a call of any name that is neither bound nor a
# builtin is a host call (cella); under CPython the harness makes every
# host.py function a global. A bound name shadows the host's.
def local_helper(x):
    return x * 2
w = get_weather("Tokyo")
s = add(local_helper(2), 1)
users = list(map(get_user, [1, 2]))
names = [u["name"] for u in filter(lambda u: u["id"] > 1, users)]
def counter(n):
    return "local counter " + str(n)
(w["sky"], s, names, counter(3))
# expect: ("cloudy", 5, ["user2"], "local counter 3")
