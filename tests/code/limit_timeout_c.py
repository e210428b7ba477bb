# cella-only
# limits: time_ms=300
# One long operation in C (a big modulus of bignums) still meets the time
# limit: the bignum kernels read the clock.
x = 7**6000000 % 3**3000000
x
# expect-error: TimeoutError: time limit exceeded (300000 us)
