# datetime beyond the everyday: strptime, combine and time, ordinals, ISO
# calendar, timedelta arithmetic between timedeltas, strftime's rarer codes.
import datetime
from datetime import date, datetime as dt, timedelta
d = date(2024, 2, 28)
t = dt(2024, 3, 10, 14, 30, 15)
assert d.strftime("%Y/%m/%d %a %b %j") == "2024/02/28 Wed Feb 059" and d.toordinal() == 738944
assert date.fromordinal(738944) == d and date(2024, 1, 1) < date(2024, 1, 2)
assert t.strftime("%H:%M:%S %p %I") == "14:30:15 PM 02" and t.strftime("%Y-%m-%dT%H:%M") == "2024-03-10T14:30"
assert dt.strptime("05/01/2024 08:15", "%d/%m/%Y %H:%M") == dt(2024, 1, 5, 8, 15)
assert dt.combine(date(2024, 1, 1), datetime.time(9, 5)) == dt(2024, 1, 1, 9, 5)
assert timedelta(hours=3) / 2 == timedelta(hours=1, minutes=30) and timedelta(hours=1) // timedelta(minutes=7) == 8
(date(2024, 3, 1).isocalendar()[1], date(2024, 12, 30).isocalendar()[0])
# expect: (9, 2025)
