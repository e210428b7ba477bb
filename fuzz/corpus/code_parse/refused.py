class A:
    pass
match x:
    case 1: pass
del y
with z as w: pass
@dec
def f(): yield 1
