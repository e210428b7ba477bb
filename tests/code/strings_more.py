# str and bytes features LLM code rarely uses: printf-style formatting of
# bytes, dunder methods called directly.
assert b"%s=%d" % (b"k", 5) == b"k=5" and b"%x" % 255 == b"ff"
assert "a".__len__() == 1 and "ab".__contains__("b") and (2).__add__(3) == 5
"abc".__getitem__(1)
# expect: "b"
