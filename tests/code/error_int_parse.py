# int() of a bad string, uncaught.
rows = ["1", "2", "three"]
total = 0
for r in rows:
    total += int(r)
# expect-error: ValueError: invalid literal for int() with base 10: 'three'
