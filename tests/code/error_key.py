# A missing key: the message is the key's repr.
config = {"host": "h", (1, 2): "t"}
assert config[(1, 2)] == "t"
config["port"]
# expect-error: KeyError: 'port'
