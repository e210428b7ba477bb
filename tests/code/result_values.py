# The last expression's value crosses as tagged JSON: every type the tags
# carry, nested, and {"$repr": ...} for what JSON cannot (a function).
def helper():
    return 1
nested = {"t": (1, (2, [3])), "s": {4}, "f": frozenset({5}), "b": b"\x01", "big": -(2 ** 80),
          "inf": float("-inf"), "keys": {(1, 2): None, 3: "x"}, "$": 1, "fn": helper}
(nested, [helper], 2 ** 53, -(2 ** 53) - 1, 1.0, 1e-300, "", "\x00\n\u2028", True, None)
# expect: ({"t": (1, (2, [3])), "s": {4}, "f": frozenset({5}), "b": b"\x01", "big": -(2 ** 80), "inf": float("-inf"), "keys": {(1, 2): None, 3: "x"}, "$": 1, "fn": Repr("<function helper>")}, [Repr("<function helper>")], 2 ** 53, -(2 ** 53) - 1, 1.0, 1e-300, "", "\x00\n\u2028", True, None)
