#!/usr/bin/python3
"""Random expressions over str and bytes for differential runs against
CPython: writes N lines in the format of code_str_cases.txt.

    python3 tests/unit/gen_code_str_random.py SEED N > /tmp/cases.txt
    python3 tests/unit/gen_code_str_cases.py < /tmp/cases.txt \
        > tests/unit/test_code_str_cases.h     # then build and run test_code_str
    git checkout tests/unit/test_code_str_cases.h
"""
import random
import sys

random.seed(int(sys.argv[1]))
alpha = ['a','b','A','B',' ','\t','\n','é','É','ß','Σ','σ','ς','日','1','٣','_','-',',','.','\r','\x85','\u2028','ǅ','ﬁ','İ','0','%','{','}','x','X','\x00','\u3000']
def rs(n=None):
    n = random.randint(0, 8) if n is None else n
    return ''.join(random.choice(alpha) for _ in range(n))
def ri():
    return random.choice([-10,-3,-1,0,1,2,3,5,8,20])
def opt(*xs):
    return list(xs[:random.randint(0, len(xs))])
meths = {
 'find': lambda: [rs(2)] + opt(ri(), ri()), 'rfind': lambda: [rs(2)] + opt(ri(), ri()),
 'index': lambda: [rs(1)] + opt(ri(), ri()), 'rindex': lambda: [rs(1)] + opt(ri(), ri()),
 'count': lambda: [rs(random.randint(0,2))] + opt(ri(), ri()),
 'startswith': lambda: [rs(2)] + opt(ri(), ri()), 'endswith': lambda: [rs(2)] + opt(ri(), ri()),
 'split': lambda: opt(random.choice([None, rs(1), rs(2)]), ri()),
 'rsplit': lambda: opt(random.choice([None, rs(1), rs(2)]), ri()),
 'splitlines': lambda: opt(random.choice([True, False])),
 'strip': lambda: opt(random.choice([None, rs(2)])), 'lstrip': lambda: opt(rs(2)), 'rstrip': lambda: opt(rs(2)),
 'replace': lambda: [rs(random.randint(0,2)), rs(2)] + opt(ri()),
 'partition': lambda: [rs(1)], 'rpartition': lambda: [rs(1)],
 'upper': lambda: [], 'lower': lambda: [], 'casefold': lambda: [], 'title': lambda: [], 'capitalize': lambda: [], 'swapcase': lambda: [],
 'isdigit': lambda: [], 'isalpha': lambda: [], 'isalnum': lambda: [], 'isspace': lambda: [], 'isupper': lambda: [], 'islower': lambda: [],
 'isnumeric': lambda: [], 'isdecimal': lambda: [], 'isidentifier': lambda: [], 'isprintable': lambda: [], 'istitle': lambda: [], 'isascii': lambda: [],
 'center': lambda: [ri()] + opt(rs(1)), 'ljust': lambda: [ri()] + opt(rs(1)), 'rjust': lambda: [ri()] + opt(rs(1)), 'zfill': lambda: [ri()],
 'expandtabs': lambda: opt(ri()), 'removeprefix': lambda: [rs(2)], 'removesuffix': lambda: [rs(2)],
 'encode': lambda: opt(random.choice(['utf-8','ascii','latin-1']), random.choice(['strict','ignore','replace','backslashreplace','xmlcharrefreplace'])),
 'format': lambda: [rs(2), ri()],
}
out = []
for _ in range(int(sys.argv[2])):
    k = random.random()
    s = rs()
    if k < 0.6:
        m = random.choice(list(meths))
        args = meths[m]()
        out.append(f"{s!r}.{m}({', '.join(repr(a) for a in args)})")
    elif k < 0.7:
        lo, hi, st = random.choice([None, ri()]), random.choice([None, ri()]), random.choice([None, 1, 2, -1, -2, 3])
        f = lambda x: '' if x is None else str(x)
        out.append(f"{s!r}[{f(lo)}:{f(hi)}:{f(st)}]")
    elif k < 0.8:
        spec = ''.join(random.choice(['', random.choice('<>^=*0é')]) + random.choice(['', '+', '-', ' ']) + random.choice(['', '#']) + random.choice(['', '0']) + random.choice(['', str(random.randint(0,12))]) + random.choice(['', ',', '_']) + random.choice(['', '.' + str(random.randint(0,6))]) + random.choice(['', 'd','x','X','o','b','c','e','f','g','%','n','s','E','G','F']))
        v = random.choice([repr(rs()), str(ri()), repr(random.choice([0.0, -0.0, 1.5, -2.25, 1e16, 1e-7, 123456.789, 0.1, 2.5, 1e300])), 'True', '12345678'])
        out.append(f"format({v}, {spec!r})")
    elif k < 0.9:
        fmtc = random.choice(['%s','%r','%a','%d','%5d','%-5d','%05d','%x','%#X','%o','%e','%.2f','%10.3g','%c','%%','%+d','% d','%5s','%-6r','%.1s'])
        v = random.choice([repr(rs()), str(ri()), '1.5', '-0.5', 'True', 'None', '65'])
        out.append(f"{rs(2) + fmtc + rs(2)!r} % ({v},)")
    elif k < 0.95:
        fl = ''.join(random.sample('-+ #0', random.randint(0, 3)))
        w = random.choice(['', '5', '12', '*'])
        pr = random.choice(['', '.0', '.3', '.*'])
        t = random.choice('sradiouxXeEfFgGc')
        v = random.choice([repr(rs()), str(ri()), '2.5', '-1e-3', '1e20', 'True', '97'])
        extra = [str(random.randint(-6, 6)) for x in (w, pr) if '*' in x]
        args = ', '.join(extra + [v])
        out.append(f"{'%' + fl + w + pr + t!r} % ({args},)")
    elif k < 0.98:
        b = repr(rs().encode('utf-8', 'replace')[:6])
        m = random.choice(['split()', 'strip()', 'upper()', 'title()', 'hex()', "hex(':')",
                           'decode()', "decode('ascii', 'replace')", "decode('latin-1')",
                           'isalpha()', 'isdigit()', 'islower()', 'istitle()', 'splitlines()',
                           "find(b'a')", "count(b'')", "replace(b'a', b'xy')", "partition(b' ')",
                           "center(9, b'*')", "zfill(7)", "split(b'a', 1)", "rsplit(None, 1)",
                           "startswith(b'a')", "removeprefix(b'\\xc3')", 'swapcase()'])
        out.append(f"{b}.{m}")
    else:
        parts = random.choice(['{}', '{0}', '{:>5}', '{!r}', '{0!s:^6}', '{:{}}', '{a}', '{0[0]}', '{{', '}}', '{:.2}'])
        out.append(f"{rs(2) + parts + rs(2)!r}.format({rs(3)!r}, 3, a={rs(2)!r})")
print('\n'.join(out))
