# math: constants, rounding, powers and logs, trig, integer functions,
# domain errors.
import math
assert math.pi == 3.141592653589793 and math.e == 2.718281828459045 and math.tau == 2 * math.pi
assert math.inf == float("inf") and math.isnan(math.nan)
assert math.floor(2.7) == 2 and math.ceil(2.1) == 3 and math.floor(-2.5) == -3 and math.trunc(-2.7) == -2
assert type(math.floor(2.7)) is int and math.floor(10 ** 20 + 0.0) == 10 ** 20
assert math.sqrt(16) == 4.0 and math.sqrt(2) == 1.4142135623730951 and math.isqrt(17) == 4
assert math.isqrt(10 ** 40) == 10 ** 20
assert math.pow(2, 10) == 1024.0 and math.exp(0) == 1.0 and math.exp(1) == math.e
assert math.log(math.e) == 1.0 and math.log(8, 2) == 3.0 and math.log10(1000) == 3.0 and math.log2(1024) == 10.0
assert math.log(10 ** 400) == 921.0340371976182
assert math.sin(0) == 0.0 and math.cos(0) == 1.0 and abs(math.sin(math.pi)) < 1e-15
assert math.atan2(1, 1) == math.pi / 4 and math.degrees(math.pi) == 180.0 and math.radians(180) == math.pi
assert math.hypot(3, 4) == 5.0 and math.fabs(-2) == 2.0 and math.copysign(3, -0.0) == -3.0
assert math.factorial(10) == 3628800 and math.factorial(25) == 15511210043330985984000000
assert math.gcd(12, 18) == 6 and math.gcd(0, 5) == 5 and math.lcm(4, 6) == 12 and math.gcd(2 ** 80, 6 ** 40) == 2 ** 40
assert math.comb(10, 3) == 120 and math.perm(5, 2) == 20 and math.comb(100, 50) == 100891344545564193334812497256
assert math.isclose(0.1 + 0.2, 0.3) and not math.isclose(1.0, 1.1) and math.isclose(1.0, 1.05, rel_tol=0.1)
assert math.isinf(-math.inf) and math.isfinite(1.0) and not math.isfinite(math.nan)
assert math.fsum([0.1] * 10) == 1.0 and math.prod([1, 2, 3, 4]) == 24 and math.prod([]) == 1
assert math.modf(2.5) == (0.5, 2.0) and math.fmod(-7, 3) == -1.0 and math.frexp(8.0) == (0.5, 4)
assert math.dist([0, 0], [3, 4]) == 5.0
from math import sqrt, pi as PI
assert sqrt(9) == 3.0 and PI == math.pi
def errs():
    out = []
    for call in (lambda: math.sqrt(-1), lambda: math.log(0), lambda: math.factorial(-1),
                 lambda: math.exp(1000), lambda: math.acos(2)):
        try:
            call()
        except (ValueError, OverflowError) as e:
            out.append(f"{type(e).__name__}: {e}")
    return out
assert errs() == ["ValueError: math domain error", "ValueError: math domain error",
                  "ValueError: factorial() not defined for negative values",
                  "OverflowError: math range error", "ValueError: math domain error"]
[round(math.sin(x / 4), 6) for x in range(3)]
# expect: [0.0, 0.247404, 0.479426]
