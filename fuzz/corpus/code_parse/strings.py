a = 'single' "double" '''triple
quoted''' """also
triple"""
b = b'bytes\x00\xff' rb'raw\bytes' Rb"x" bR'y'
r = r'\d+\.\w*' u'unicode \u00e9 \U0001F600 \x41 \101 \n\t\\'
f1 = f'{a!r} {b!s:>10} {c!a:^{w}.{p}f} {{literal}} {d=} {e = !s} {f["k"]} {g:%Y-%m-%d}'
f2 = f"""multi
{line!r}
{x:{y}}"""
f3 = rf'\n{x}' fr"{y}\d" F'{z}' 'plain' f'{(w := 1)}'
c = 'a' \
    'b'
s = "\N{BULLET}" if False else ""
