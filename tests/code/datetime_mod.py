# datetime without the clock: date, datetime, timedelta arithmetic,
# isoformat/fromisoformat, strftime, comparisons, weekday.
import datetime
from datetime import date, datetime as dt, timedelta
d = date(2024, 2, 28)
assert d + timedelta(days=1) == date(2024, 2, 29) and d + timedelta(days=2) == date(2024, 3, 1)
assert d.year == 2024 and d.month == 2 and d.day == 28 and d.weekday() == 2 and d.isoweekday() == 3
assert d.isoformat() == "2024-02-28" and str(d) == "2024-02-28" and repr(d) == "datetime.date(2024, 2, 28)"
assert date.fromisoformat("2023-12-31") + timedelta(days=1) == date(2024, 1, 1)
assert (date(2024, 12, 25) - date(2024, 1, 1)).days == 359 and d.replace(day=1) == date(2024, 2, 1)
t = dt(2024, 3, 10, 14, 30, 15)
assert t.hour == 14 and t.minute == 30 and t.second == 15 and t.microsecond == 0
assert t.isoformat() == "2024-03-10T14:30:15" and str(t) == "2024-03-10 14:30:15"
assert t.isoformat(sep=" ") == "2024-03-10 14:30:15" and t.date() == date(2024, 3, 10)
assert repr(t) == "datetime.datetime(2024, 3, 10, 14, 30, 15)"
assert dt.fromisoformat("2024-03-10T14:30:15.250000") == dt(2024, 3, 10, 14, 30, 15, 250000)
assert t + timedelta(hours=10) == dt(2024, 3, 11, 0, 30, 15)
assert t - dt(2024, 3, 9, 14, 30, 15) == timedelta(days=1)
assert t.replace(year=2000, second=0) == dt(2000, 3, 10, 14, 30)
td = timedelta(days=1, hours=2, minutes=3, seconds=4.5)
assert td.days == 1 and td.seconds == 7384 and td.microseconds == 500000 and td.total_seconds() == 93784.5
assert str(td) == "1 day, 2:03:04.500000" and str(timedelta(hours=5)) == "5:00:00"
assert str(timedelta(days=-1)) == "-1 day, 0:00:00" and str(timedelta(seconds=-1)) == "-1 day, 23:59:59"
assert repr(timedelta(days=2, seconds=5)) == "datetime.timedelta(days=2, seconds=5)"
assert timedelta(weeks=1) == timedelta(days=7) and timedelta(hours=1) * 3 == timedelta(hours=3)
assert -timedelta(days=1) == timedelta(days=-1) and abs(timedelta(days=-2)) == timedelta(days=2)
assert sorted([date(2024, 5, 1), date(2023, 1, 1)]) == [date(2023, 1, 1), date(2024, 5, 1)]
assert max(t, dt(2025, 1, 1)).year == 2025 and {date(2024, 1, 1): "x"}[date(2024, 1, 1)] == "x"
try:
    date(2023, 2, 29)
    assert False
except ValueError as e:
    assert str(e) == "day is out of range for month"
try:
    date.fromisoformat("2024-13-01")
    assert False
except ValueError as e:
    assert str(e) == "month must be in 1..12"
try:
    d - 1
    assert False
except TypeError as e:
    assert str(e) == "unsupported operand type(s) for -: 'datetime.date' and 'int'"
days = [(date(2024, 1, 1) + timedelta(days=i)).strftime("%a") for i in range(3)]
(days, (dt(2024, 1, 1, 12) - dt(2023, 12, 31)).total_seconds())
# expect: (["Mon", "Tue", "Wed"], 129600.0)
