# Unhashable keys in sets and dicts.
seen = set()
seen.add((1, 2))
seen.add([1, 2])
# expect-error: TypeError: unhashable type: 'list'
