# raise ... from: the run's error is the outer exception.
def parse(text):
    try:
        return int(text)
    except ValueError as e:
        raise RuntimeError(f"bad config value {text!r}") from e
assert parse("12") == 12
parse("twelve")
# expect-error: RuntimeError: bad config value 'twelve'
