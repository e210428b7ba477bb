# Integer and float division and modulo by zero.
def ratio(a, b):
    return a / b
assert ratio(1, 2) == 0.5
msgs = []
for op in (lambda: 1 // 0, lambda: 1.0 // 0, lambda: 1.0 % 0, lambda: 1 / 0, lambda: 2 ** 70 // 0,
           lambda: divmod(1, 0), lambda: 0 ** -1):
    try:
        op()
    except ZeroDivisionError as e:
        msgs.append(str(e))
assert msgs == ["integer division or modulo by zero", "float floor division by zero", "float modulo",
                "division by zero", "integer division or modulo by zero",
                "integer division or modulo by zero", "0.0 cannot be raised to a negative power"], msgs
values = [ratio(4, 2)]
values.append(10 % 0)
# expect-error: ZeroDivisionError: integer modulo by zero
