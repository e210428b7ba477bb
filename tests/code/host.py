"""The host functions the corpus calls: plain Python, the same under both
halves of the harness. Under /usr/bin/python3 they are injected as globals;
under cella each host-call line is answered by calling the function named in
it with the decoded arguments.

A function is sync or async here, and the files must use it that way: under
cella a host call made inside an `async def` body returns an awaitable, so an
async function is called with `await` inside async code, a sync one outside
it. Results are deterministic (no clock, no network)."""

WEATHER = {
    "London": {"city": "London", "temp_c": 12.5, "sky": "rain"},
    "Paris": {"city": "Paris", "temp_c": 17.0, "sky": "clear"},
    "Tokyo": {"city": "Tokyo", "temp_c": 21.25, "sky": "cloudy"},
}

PAGES = {
    "https://example.com/a": "alpha",
    "https://example.com/b": "bravo bravo",
    "https://example.com/c": "charlie charlie charlie",
}


# ---- sync ----------------------------------------------------------------

def get_weather(city):
    if city not in WEATHER:
        raise ValueError(f"unknown city: {city}")
    return dict(WEATHER[city])


def add(a, b):
    return a + b


def fail(msg):
    raise ValueError(msg)


def echo(*args, **kwargs):
    """Hands back exactly what it was given, so a file can check how values
    cross the boundary (tuples, sets, bytes, big ints, nested dicts)."""
    return {"args": list(args), "kwargs": kwargs}


def identity(x):
    return x


def get_user(user_id):
    return {"id": user_id, "name": f"user{user_id}", "tags": ["a", "b"][: user_id % 3]}


def counter(n):
    return list(range(n))


def timeout_error(msg):
    raise TimeoutError(msg)


def custom_error(msg):
    class QuotaExceeded(Exception):
        pass
    raise QuotaExceeded(msg)


# ---- async ---------------------------------------------------------------

async def fetch(url):
    if url not in PAGES:
        raise ValueError(f"404: {url}")
    return PAGES[url]


async def fetch_len(url):
    return len(await fetch(url))


async def slow_add(a, b):
    return a + b


async def afail(msg):
    raise ValueError(msg)


SYNC = {f.__name__: f for f in (get_weather, add, fail, echo, identity, get_user, counter,
                                timeout_error, custom_error)}
ASYNC = {f.__name__: f for f in (fetch, fetch_len, slow_add, afail)}
ALL = {**SYNC, **ASYNC}
