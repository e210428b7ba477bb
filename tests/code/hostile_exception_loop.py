# 100000 exceptions raised with causes and caught, and a megabyte of
# printed output: nothing accumulates, the output arrives whole.
caught = 0
for i in range(100000):
    try:
        try:
            raise ValueError(i)
        except ValueError as e:
            raise KeyError(i) from e
    except KeyError as e:
        caught += 1
        last = e
print("line of output\n" * 70000, end="")
(caught, str(last), str(last.__cause__))
# expect: (100000, "99999", "99999")
