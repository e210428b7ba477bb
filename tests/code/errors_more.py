# functions: add
# Rarer error messages: assigning a read-only attribute, a NameError inside
# a comprehension (with a host function declared, unknown names are not
# host calls).
try:
    (1).real = 5
except AttributeError as e:
    assert str(e) == "attribute 'real' of 'int' objects is not writable"
try:
    [undefined_name_in_comp for _ in range(1)]
    assert False
except NameError as e:
    assert str(e) == "name 'undefined_name_in_comp' is not defined"
try:
    "abc".nope
except AttributeError as e:
    msg = str(e)
msg
# expect: "'str' object has no attribute 'nope'"
