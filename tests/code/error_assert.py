# A failing assert with a message.
def check(items):
    assert len(items) < 3, f"too many items: {len(items)}"
    return items
check([1, 2])
check([1, 2, 3])
# expect-error: AssertionError: too many items: 3
