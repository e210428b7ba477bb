# functions: get_weather,add,fail,echo,identity,get_user,custom_error,timeout_error
# Host calls from plain (sync) code: each pauses the run until answered.
# Values of every type cross the boundary and come back equal; the host's
# exceptions arrive as Python exceptions that the program can catch.
w = get_weather("London")
assert w == {"city": "London", "temp_c": 12.5, "sky": "rain"}
assert add(2, 3) == 5 and add("a", "b") == "ab" and add([1], [2]) == [1, 2]
assert add(2 ** 70, 1) == 2 ** 70 + 1 and add(0.5, 0.25) == 0.75
assert add(a=1, b=2) == 3 and add(1, b=2) == 3
values = [None, True, False, 0, -1, 2 ** 53, -(2 ** 64), 1.5, -0.0, "", "héllo 😀",
          [1, [2, []]], (1, (2,)), {"k": {"n": [None]}}, {1: "int key"}, {(1, 2): "t"},
          {"$dollar": 1}, b"\x00\xff", set(), {1, 2}, frozenset({"a"}), float("inf"),
          float("-inf"), (), [(), {}]]
for v in values:
    back = identity(v)
    assert back == v and type(back) is type(v), (v, back)
nan = identity(float("nan"))
assert nan != nan
r = echo(1, "two", k=(3,), z=None)
assert r == {"args": [1, "two"], "kwargs": {"k": (3,), "z": None}}
users = [get_user(i) for i in range(1, 4)]
assert [u["name"] for u in users] == ["user1", "user2", "user3"] and users[1]["tags"] == ["a", "b"]
temps = {}
for city in ["Paris", "Tokyo"]:
    temps[city] = get_weather(city)["temp_c"]
assert temps == {"Paris": 17.0, "Tokyo": 21.25}
try:
    fail("bad input")
    assert False
except ValueError as e:
    assert str(e) == "bad input" and e.args == ("bad input",)
try:
    get_weather("Atlantis")
    assert False
except ValueError as e:
    assert str(e) == "unknown city: Atlantis"
try:
    timeout_error("slow")
    assert False
except OSError as e:
    assert type(e) is TimeoutError and str(e) == "slow"
try:
    custom_error("over quota")
    assert False
except Exception as e:
    assert type(e).__name__ == "QuotaExceeded" and str(e) == "over quota"
def total_temp(cities):
    return sum(get_weather(c)["temp_c"] for c in cities)
assert total_temp(["London", "Paris"]) == 29.5
key_fn_calls = sorted(["Tokyo", "London", "Paris"], key=lambda c: get_weather(c)["temp_c"])
assert key_fn_calls == ["London", "Paris", "Tokyo"]
print("fetched", len(users), "users")
f = add
summary = {"sum": f(10, 20), "warm": [c for c in ("London", "Paris") if get_weather(c)["temp_c"] > 15]}
summary
# expect: {"sum": 30, "warm": ["Paris"]}
