# print() whose argument cannot be converted raises, prints nothing, and
# leaves print() working (a failed print once broke the output buffer).
try:
    print(10**5000)
except ValueError as e:
    msg = str(e)
assert msg.startswith("Exceeds the limit (4300 digits)")
print("after")
print("a", "b", sep="-")
msg[:17]
# expect: 'Exceeds the limit'
