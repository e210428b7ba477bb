# Attribute errors name the type and the attribute.
try:
    [].push(1)
except AttributeError as e:
    assert str(e) == "'list' object has no attribute 'push'"
d = {"a": 1}
d.a
# expect-error: AttributeError: 'dict' object has no attribute 'a'
