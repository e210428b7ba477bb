# try/except/else/finally in every order, raise from, implicit context,
# re-raise, exceptions as values (args, str, repr), assert, the hierarchy.
log = []
def run(fail):
    try:
        log.append("try")
        if fail:
            raise ValueError("boom")
    except ValueError as e:
        log.append(f"except {e}")
    else:
        log.append("else")
    finally:
        log.append("finally")
    return log
assert run(False) == ["try", "else", "finally"]
log.clear()
assert run(True) == ["try", "except boom", "finally"]
def finally_wins():
    try:
        return "try"
    finally:
        log.append("cleanup")
log.clear()
assert finally_wins() == "try" and log == ["cleanup"]
def finally_overrides():
    try:
        return "try"
    finally:
        return "finally"
assert finally_overrides() == "finally"
def swallow():
    try:
        raise KeyError("k")
    finally:
        return "swallowed"
assert swallow() == "swallowed"
def loop_finally():
    out = []
    for i in range(3):
        try:
            if i == 1:
                continue
            if i == 2:
                break
            out.append(i)
        finally:
            out.append(f"f{i}")
    return out
assert loop_finally() == [0, "f0", "f1", "f2"]
try:
    try:
        1 / 0
    except ZeroDivisionError as e:
        raise ValueError("wrapped") from e
except ValueError as e:
    assert isinstance(e.__cause__, ZeroDivisionError) and e.__suppress_context__
    assert str(e.__cause__) == "division by zero"
try:
    try:
        {}["x"]
    except KeyError:
        raise RuntimeError("during handling")
except RuntimeError as e:
    assert isinstance(e.__context__, KeyError) and e.__cause__ is None
try:
    try:
        raise TypeError("inner")
    except TypeError:
        raise ValueError("no context") from None
except ValueError as e:
    assert e.__cause__ is None and e.__suppress_context__
def reraise():
    try:
        int("x")
    except ValueError:
        log.append("logged")
        raise
log.clear()
try:
    reraise()
except ValueError as e:
    assert str(e) == "invalid literal for int() with base 10: 'x'" and log == ["logged"]
try:
    raise IndexError
except LookupError as e:
    assert type(e) is IndexError and str(e) == "" and e.args == ()
try:
    raise Exception("a", 2)
except Exception as e:
    assert e.args == ("a", 2) and str(e) == "('a', 2)" and repr(e) == "Exception('a', 2)"
assert repr(ValueError("v")) == "ValueError('v')" and str(KeyError("k")) == "'k'"
assert isinstance(ZeroDivisionError(), ArithmeticError) and issubclass(KeyError, LookupError)
assert issubclass(ModuleNotFoundError, ImportError) and issubclass(TimeoutError, OSError)
assert issubclass(RecursionError, RuntimeError) and issubclass(NotImplementedError, RuntimeError)
assert issubclass(UnboundLocalError, NameError) and issubclass(Exception, BaseException)
def which(exc):
    try:
        raise exc
    except (KeyError, IndexError) as e:
        return "lookup:" + type(e).__name__
    except ArithmeticError:
        return "arith"
    except Exception as e:
        return "other:" + type(e).__name__
assert [which(x) for x in (KeyError(), IndexError(), OverflowError(), TypeError())] == [
    "lookup:KeyError", "lookup:IndexError", "arith", "other:TypeError"]
try:
    raise ValueError("x")
except ValueError as e:
    caught = e
assert caught.args == ("x",)
err = None
try:
    pass
except Exception as err:
    pass
assert err is None
try:
    assert 1 == 2, "numbers differ"
except AssertionError as e:
    assert str(e) == "numbers differ"
try:
    assert [], {"k": 1}
except AssertionError as e:
    assert e.args == ({"k": 1},)
try:
    assert False
except AssertionError as e:
    assert e.args == ()
try:
    raise "not an exception"
except TypeError as e:
    assert str(e) == "exceptions must derive from BaseException"
def nested_finally():
    order = []
    try:
        try:
            raise ValueError("v")
        finally:
            order.append("inner finally")
    except ValueError:
        order.append("outer except")
    finally:
        order.append("outer finally")
    return order
assert nested_finally() == ["inner finally", "outer except", "outer finally"]
def except_in_except():
    try:
        raise KeyError("a")
    except KeyError:
        try:
            raise ValueError("b")
        except ValueError as inner:
            return type(inner.__context__).__name__
assert except_in_except() == "KeyError"
def check(v):
    if not isinstance(v, int):
        raise TypeError(f"expected int, got {type(v).__name__}")
    return v
results = []
for value in [1, "2", 3.0]:
    try:
        results.append(check(value))
    except TypeError as e:
        results.append(str(e))
print(results)
def bad():
    return [1, 2][5]
def caller():
    return bad()
caller()
# expect-error: IndexError: list index out of range
