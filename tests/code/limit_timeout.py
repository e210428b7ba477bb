# cella-only
# limits: time_ms=200
# output: "spinning\n"
# An infinite loop ends with TimeoutError under the time limit; the output
# before it is kept.
print("spinning")
n = 0
while True:
    n += 1
# expect-error: TimeoutError
