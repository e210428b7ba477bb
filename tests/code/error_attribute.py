# Attribute errors name the type and the attribute.
try:
    [].push(1)
except AttributeError as e:
    assert str(e) == "'list' object has no attribute 'push'"
try:
    (1).real = 5
except AttributeError as e:
    assert str(e) == "attribute 'real' of 'int' objects is not writable"
d = {"a": 1}
d.a
# expect-error: AttributeError: 'dict' object has no attribute 'a'
