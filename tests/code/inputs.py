# input: city="Paris"
# input: ids=[1, 2, 3]
# input: point={"$tuple": [1.5, -2]}
# input: tags={"$set": ["a", "b"]}
# input: big={"$int": "123456789012345678901234567890"}
# input: raw={"$bytes": "AP8="}
# input: config={"retries": 3, "nested": {"on": true, "ratio": 0.5, "none": null}}
# input: weird={"$dict": [[1, "one"], [{"$tuple": [2, 3]}, "pair"]]}
# Inputs bound as globals before the run, from tagged JSON: each arrives
# with its Python type.
assert city == "Paris" and type(city) is str
assert ids == [1, 2, 3] and type(point) is tuple and point == (1.5, -2)
assert tags == {"a", "b"} and type(tags) is set
assert big == 123456789012345678901234567890 and raw == b"\x00\xff"
assert config["nested"]["on"] is True and config["nested"]["none"] is None
assert weird == {1: "one", (2, 3): "pair"}
ids.append(4)
(city.upper(), sum(ids), point[1] * 2, config["retries"] + 1, big % 1000, sorted(tags))
# expect: ("PARIS", 10, -4, 4, 890, ["a", "b"])
