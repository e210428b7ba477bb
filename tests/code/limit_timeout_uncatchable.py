# cella-only
# limits: time_ms=200
# A program that catches everything still ends at the time limit: the loop
# around the handler spins on, and the limit ends the run again.
while True:
    try:
        while True:
            pass
    except Exception:
        pass
# expect-error: TimeoutError
