# functions: add,fail
# A host exception the program does not catch ends the run with it, at the
# line of the call; the output printed before it is kept.
x = add(1, 2)
print("before", x)
fail("the host said no")
print("never")
# expect-error: ValueError: the host said no
