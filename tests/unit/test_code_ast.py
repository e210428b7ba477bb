"""Code mode's parser against CPython's: the same trees for the standard
library's functions (those free of constructs the subset refuses) and for
hand-picked snippets, the same exception and line for syntax errors, and
NotImplementedError for the refused constructs CPython accepts.

Trees are compared as code_ast_dump's S-expressions: CPython's ast is
converted to that form here (elif chains flattened as cella keeps them).
Needs CPython 3.11, whose grammar cella follows (f-strings in particular)."""
import ast
import os
import subprocess
import sys
import sysconfig
import textwrap
import warnings

import pytest

DUMP = os.environ.get("CELLA_CODE_DUMP",
                      os.path.join(os.path.dirname(__file__), "../../build/cella-code-dump"))

pytestmark = pytest.mark.skipif(sys.version_info[:2] != (3, 11),
                                reason="compares with CPython 3.11's grammar")

# ---- CPython's ast in code_ast_dump's form ----

BIN = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
       ast.Mod: "%", ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>", ast.BitOr: "|",
       ast.BitXor: "^", ast.BitAnd: "&"}
CMP = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
       ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}
UN = {ast.Not: "not", ast.USub: "neg", ast.UAdd: "pos", ast.Invert: "~"}


def nm(name):
    """Names as the dump's bytes (read back as latin-1)."""
    return name.encode("utf-8").decode("latin-1")


def quoted(b):
    out = "'"
    for c in b:
        if c in (0x5C, 0x27):
            out += "\\" + chr(c)
        elif c == 10:
            out += "\\n"
        elif c == 9:
            out += "\\t"
        elif c < 0x20 or c == 0x7F:
            out += "\\x%02x" % c
        else:
            out += chr(c)
    return out + "'"


def shortest(f):
    for p in range(1, 18):
        s = "%.*g" % (p, f)
        if float(s) == f:
            break
    return s if any(ch in s for ch in ".eEin") else s + ".0"


class Dumper:
    def __init__(self, src):
        self.src = src

    def int_text(self, node):
        """cella keeps an int's digits and base: rebuild them from the source."""
        text = ast.get_source_segment(self.src, node).replace("_", "")
        if text[:2].lower() in ("0x", "0o", "0b"):
            return text[:2].lower() + text[2:]
        return text

    def params(self, a):
        out = "(params"
        pos = a.posonlyargs + a.args
        defs = [None] * (len(pos) - len(a.defaults)) + a.defaults
        every = list(zip(pos, defs)) + list(zip(a.kwonlyargs, a.kw_defaults))
        for i, (p, d) in enumerate(every):
            if i == len(pos):
                out += " *" + (nm(a.vararg.arg) if a.vararg else "")
            out += " " + nm(p.arg)
            if p.annotation:
                out += ":" + self.e(p.annotation)
            if d is not None:
                out += "=" + self.e(d)
            if a.posonlyargs and i + 1 == len(a.posonlyargs):
                out += " /"
        if a.vararg and not a.kwonlyargs:
            out += " *" + nm(a.vararg.arg)
        if a.kwarg:
            out += " **" + nm(a.kwarg.arg)
        return out + ")"

    def comp(self, gens):
        return "".join(" (for " + self.e(g.target) + " " + self.e(g.iter) +
                       "".join(" (if " + self.e(c) + ")" for c in g.ifs) + ")" for g in gens)

    def seq(self, xs):
        return "".join(" " + self.e(x) for x in xs)

    def e(self, x):
        e = self.e
        if x is None:
            return "_"
        t = type(x)
        if t is ast.Name:
            return nm(x.id)
        if t is ast.Constant:
            v = x.value
            if v is None or v is True or v is False:
                return str(v)
            if v is Ellipsis:
                return "..."
            if isinstance(v, int):
                return self.int_text(x)
            if isinstance(v, float):
                return shortest(v)
            if isinstance(v, str):
                return quoted(v.encode("utf-8", "surrogatepass"))
            if isinstance(v, bytes):
                return "b" + quoted(v)
        if t is ast.JoinedStr:
            return "(f" + self.seq(x.values) + ")"
        if t is ast.FormattedValue:
            return ("(fmt " + e(x.value) + (" !" + chr(x.conversion) if x.conversion != -1 else "")
                    + (" " + e(x.format_spec) if x.format_spec else "") + ")")
        if t in (ast.List, ast.Tuple, ast.Set):
            return "(" + {ast.List: "list", ast.Tuple: "tuple", ast.Set: "set"}[t] + self.seq(x.elts) + ")"
        if t is ast.Dict:
            return "(dict" + "".join(" (" + e(k) + " " + e(v) + ")" if k is not None
                                     else " (** " + e(v) + ")" for k, v in zip(x.keys, x.values)) + ")"
        if t in (ast.ListComp, ast.SetComp, ast.GeneratorExp):
            kind = {ast.ListComp: "listcomp", ast.SetComp: "setcomp", ast.GeneratorExp: "genexp"}[t]
            return "(" + kind + " " + e(x.elt) + self.comp(x.generators) + ")"
        if t is ast.DictComp:
            return "(dictcomp " + e(x.key) + " " + e(x.value) + self.comp(x.generators) + ")"
        if t is ast.Starred:
            return "(* " + e(x.value) + ")"
        if t is ast.NamedExpr:
            return "(:= " + e(x.target) + " " + e(x.value) + ")"
        if t is ast.Lambda:
            return "(lambda " + self.params(x.args) + " " + e(x.body) + ")"
        if t is ast.IfExp:
            return "(ifexp " + e(x.test) + " " + e(x.body) + " " + e(x.orelse) + ")"
        if t is ast.BoolOp:
            return "(" + ("and" if isinstance(x.op, ast.And) else "or") + self.seq(x.values) + ")"
        if t is ast.UnaryOp:
            return "(" + UN[type(x.op)] + " " + e(x.operand) + ")"
        if t is ast.BinOp:
            return "(" + BIN[type(x.op)] + " " + e(x.left) + " " + e(x.right) + ")"
        if t is ast.Compare:
            return "(cmp " + e(x.left) + "".join(" " + CMP[type(o)] + " " + e(c)
                                                 for o, c in zip(x.ops, x.comparators)) + ")"
        if t is ast.Await:
            return "(await " + e(x.value) + ")"
        if t is ast.Call:
            return ("(call " + e(x.func) + self.seq(x.args) +
                    "".join((" (kw " + nm(k.arg) + " " if k.arg else " (** ") + e(k.value) + ")"
                            for k in x.keywords) + ")")
        if t is ast.Attribute:
            return "(. " + e(x.value) + " " + nm(x.attr) + ")"
        if t is ast.Subscript:
            return "([] " + e(x.value) + " " + e(x.slice) + ")"
        if t is ast.Slice:
            return "(slice " + e(x.lower) + " " + e(x.upper) + " " + e(x.step) + ")"
        raise TypeError(t.__name__)

    def block(self, body):
        return "(" + " ".join(self.s(x) for x in body) + ")"

    def s(self, x):
        e, block, t = self.e, self.block, type(x)
        if t is ast.Expr:
            return "(expr " + e(x.value) + ")"
        if t is ast.Return:
            return "(return" + (" " + e(x.value) if x.value else "") + ")"
        if t is ast.Assign:
            return "(=" + self.seq(x.targets) + " " + e(x.value) + ")"
        if t is ast.AugAssign:
            return "(" + BIN[type(x.op)] + "= " + e(x.target) + " " + e(x.value) + ")"
        if t is ast.AnnAssign:
            return ("(ann " + e(x.target) + " " + e(x.annotation) +
                    (" " + e(x.value) if x.value else "") + ")")
        if t is ast.If:
            out = "(if"
            while True:
                out += " " + e(x.test) + " " + block(x.body)
                if len(x.orelse) == 1 and getattr(x.orelse[0], "is_elif", False):
                    x = x.orelse[0]
                    continue
                if x.orelse:
                    out += " else " + block(x.orelse)
                return out + ")"
        if t is ast.For:
            return ("(for " + e(x.target) + " " + e(x.iter) + " " + block(x.body) +
                    (" else " + block(x.orelse) if x.orelse else "") + ")")
        if t is ast.While:
            return ("(while " + e(x.test) + " " + block(x.body) +
                    (" else " + block(x.orelse) if x.orelse else "") + ")")
        if t in (ast.Break, ast.Continue, ast.Pass):
            return "(" + t.__name__.lower() + ")"
        if t in (ast.FunctionDef, ast.AsyncFunctionDef):
            return ("(" + ("async " if t is ast.AsyncFunctionDef else "") + "def " + nm(x.name) +
                    " " + self.params(x.args) + (" -> " + e(x.returns) if x.returns else "") +
                    " " + block(x.body) + ")")
        if t in (ast.Global, ast.Nonlocal):
            return "(" + t.__name__.lower() + "".join(" " + nm(n) for n in x.names) + ")"
        if t is ast.Try:
            out = "(try " + block(x.body)
            for h in x.handlers:
                out += (" (except " + e(h.type) + (" as " + nm(h.name) if h.name else "") + " " +
                        block(h.body) + ")")
            out += " else " + block(x.orelse) if x.orelse else ""
            out += " finally " + block(x.finalbody) if x.finalbody else ""
            return out + ")"
        if t is ast.Raise:
            return ("(raise" + (" " + e(x.exc) if x.exc else "") +
                    (" from " + e(x.cause) if x.cause else "") + ")")
        if t is ast.Assert:
            return "(assert " + e(x.test) + (" " + e(x.msg) if x.msg else "") + ")"
        names = lambda al: "".join(" " + nm(a.name) + (" as " + nm(a.asname) if a.asname else "")
                                   for a in al)
        if t is ast.Import:
            return "(import" + names(x.names) + ")"
        if t is ast.ImportFrom:
            return "(from " + nm(x.module) + " import" + names(x.names) + ")"
        raise TypeError(t.__name__)


def mark_elifs(tree, src):
    lines = src.splitlines()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
            sub = node.orelse[0]
            # an elif's If starts at its test, on the line of the "elif" keyword
            if lines[sub.lineno - 1].lstrip().startswith("elif"):
                sub.is_elif = True


def cpython_dump(src):
    tree = ast.parse(src)
    mark_elifs(tree, src)
    d = Dumper(src)
    return "\\N".join(d.s(x) for x in tree.body)


def cella_dump(paths):
    """{path: dump or 'ERR type line message'} from cella-code-dump, in batches."""
    out = {}
    for i in range(0, len(paths), 1000):
        r = subprocess.run([DUMP] + paths[i:i + 1000], capture_output=True, check=True)
        for line in r.stdout.decode("latin-1").split("\n"):
            if "\t" in line:
                k, v = line.split("\t", 1)
                out[k] = v
    return out


def write_all(tmp_path, sources):
    paths = []
    for i, src in enumerate(sources):
        p = tmp_path / ("%06d.py" % i)
        p.write_text(src, encoding="utf-8")
        paths.append(str(p))
    return paths


def compare(tmp_path, sources):
    paths = write_all(tmp_path, sources)
    got = cella_dump(paths)
    bad = []
    for p, src in zip(paths, sources):
        want = cpython_dump(src)
        if got.get(p) != want:
            bad.append("%s\n  source: %r\n  cella:  %s\n  python: %s" % (p, src[:300],
                                                                        got.get(p), want))
    assert not bad, "%d of %d differ; first:\n%s" % (len(bad), len(sources), "\n".join(bad[:5]))


# ---- the standard library's functions ----

REFUSED_NODES = (ast.ClassDef, ast.Yield, ast.YieldFrom, ast.Match, ast.Delete, ast.With,
                 ast.AsyncWith, ast.AsyncFor, ast.MatMult, ast.TryStar)


def acceptable(fn, src):
    for sub in ast.walk(fn):
        if isinstance(sub, REFUSED_NODES):
            return False
        if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)) and sub.decorator_list:
            return False
        if isinstance(sub, ast.Constant) and isinstance(sub.value, complex):
            return False
        if isinstance(sub, ast.ImportFrom) and (sub.level or any(a.name == "*" for a in sub.names)):
            return False
        if isinstance(sub, ast.comprehension) and sub.is_async:
            return False
        if isinstance(sub, ast.Subscript) and isinstance(sub.slice, ast.Starred):
            return False
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and any(
                0xD800 <= ord(c) <= 0xDFFF for c in sub.value):
            return False
    return "\\N{" not in src


def stdlib_functions():
    root = sysconfig.get_paths()["stdlib"]
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in ("site-packages", "dist-packages",
                                                         "__pycache__")]
        for f in sorted(filenames):
            if not f.endswith(".py"):
                continue
            try:
                with open(os.path.join(dirpath, f), encoding="utf-8") as fh:
                    src = fh.read()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    tree = ast.parse(src)
            except (SyntaxError, UnicodeDecodeError, ValueError):
                continue
            lines = src.split("\n")
            for node in ast.walk(tree):
                if (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                        and not node.decorator_list):
                    seg = "\n".join(lines[node.lineno - 1:node.end_lineno])
                    if acceptable(node, seg):
                        out.append(textwrap.dedent(seg))
    return out


def test_stdlib_functions_parse_to_cpythons_trees(tmp_path):
    sources = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for src in stdlib_functions():
            try:
                compile(src, "f", "exec")
            except SyntaxError:
                continue        # e.g. 'nonlocal' of a name bound outside the extract
            sources.append(src)
    assert len(sources) > 5000
    compare(tmp_path, sources)


# ---- snippets ----

SNIPPETS = [
    "x = 1 + 2 * 3 ** -4 // 5 % 6 - (7 << 1 >> 2 | 8 & 9 ^ ~10)",
    "a, *b = c = d[1:2, ::3], e[...]",
    "f(a, *b, c=1, **d)\nf(x for x in y)\nf(*a, *b, **c, **d)",
    "y = [i * j for i in range(3) if i for j in 'ab' if j != 'b']\n"
    "z = {k: v for k, v in d.items()}\nw = {c for c in s}\nv = (n for n in m)",
    "if a:\n    b\nelif c:\n    d\nelse:\n    if e:\n        f\n    elif g:\n        h",
    "s = f'{a!r:>{w}.{p}} {b=} {c = !s:^8} {{x}} {d[\"k\"]} {e:%Y-%m-%d}'",
    "t = rf'\\d{x}\\n' 'plain' f\"{y}\" u'u' '\\x41\\u00e9\\U0001F600\\101\\n\\t'",
    "b = b'\\x00\\xff' rb'\\x' B'x'",
    "n = 0x_ff + 0O17 + 0b1_0 + 1_000 + 1.5e-3 + .5 + 5. + 1e999 + 00 + 0_0",
    "def f(a, b=2, /, c=3, *args, d, e=5, **kw) -> 'r':\n    global G\n    return a",
    "async def g():\n    r = await h()\n    return await asyncio.gather(*[t(i) for i in r])",
    "def outer():\n    x = 1\n    def inner():\n        nonlocal x\n        x += 1\n    return inner",
    "try:\n    pass\nexcept (A, B) as e:\n    raise C('m') from e\nexcept D:\n    raise\n"
    "else:\n    pass\nfinally:\n    pass",
    "while (n := n - 1) > 0:\n    continue\nelse:\n    pass",
    "for i, (j, *k) in enumerate(x):\n    break\nelse:\n    pass",
    "lambda: 0\nlambda x, /, y=1, *a, z, **k: x\nlambda *, k: k",
    "x: int = 5\ny: 'list[int]'\nd['k']: str = 'v'",
    "import json, math as m, a.b.c\nfrom datetime import (datetime, timedelta as td,)",
    "assert x, 'msg'\nassert y",
    "a < b <= c != d is e is not f in g not in h",
    "not a and b or not c and d or e if f else g",
    "x = a if b else c if d else lambda: e",
    "match = re.match(p, s)\ncase = 1\n_ = match.group(0)",
    "x = [\n    1,\n    2,  # c\n]\ny = (1 +\n     2)\nz = 1 + \\\n    2",
    "if x:\n\tpass\nif y:\n        pass",
    "x = 1; y = 2;\n\n\n# done",
    "print(*a, sep='', end='\\n')\nsorted(d, key=lambda k: (-d[k], k))",
    "x = -2 ** -3 ** 2\ny = (-2) ** 2\nz = not -x",
    "x[a:b:c][::][1:][:-1][1,]",
    "f'''{\n  x\n}'''",
    "r = 1if x else 2",
]


def test_snippets_parse_to_cpythons_trees(tmp_path):
    compare(tmp_path, SNIPPETS)


# ---- errors ----

REFUSED = [
    "class A:\n    pass", "def f():\n    yield 1", "def f():\n    x = (yield)",
    "def f():\n    yield from g",
    "match x:\n    case 1:\n        pass", "del x", "with a as b:\n    pass",
    "@d\ndef f(): pass", "x = a @ b", "x @= b", "x = 1j",
    "async def f():\n    async for x in y: pass", "async def f():\n    async with a: pass",
    "async def f():\n    return [x async for x in y]", "from . import a", "from m import *",
    "try:\n    pass\nexcept* E:\n    pass", "x = '\\N{BULLET}'", "x[*a]",
]


def test_refused_constructs_are_not_implemented(tmp_path):
    paths = write_all(tmp_path, REFUSED)
    got = cella_dump(paths)
    for p, src in zip(paths, REFUSED):
        compile(src, "x", "exec")       # CPython accepts each
        assert got[p].startswith("ERR NotImplementedError "), (src, got[p])


SYNTAX_ERRORS = [
    "x = ", "1 = x", "f() = 1", "a, b += 1", "*a = 1", "*a, *b = c", "x = *a", "x := 1",
    "if x\n    pass", "if x:\npass", "  x", "x = 1\n    y", "if x:\n    a\n  b",
    "if x:\n\ta\n        b", "return 1", "break", "x = 1\ncontinue", "nonlocal x", "await x",
    "def f():\n    await x", "def f(a, a): pass", "def f(a=1, b): pass", "def f(*): pass",
    "f(a=1, b)", "f(**a, *b)", "f(x for x in y, 1)", "f(a=1, a=2)", "f(a.b=1)",
    "try:\n    pass", "try:\n    pass\nexcept:\n    pass\nexcept E:\n    pass",
    "try:\n    pass\nexcept A, B:\n    pass", "x = (1,\n2", ")", "(]", "'abc", "'''abc",
    "012", "1__0", "0b2", "0o8", "1abc", "f'{}'", "f'}'", "f'{x!z}'", "f'{a:{b:{c}}}'",
    "f'{x#}'", "a not b", "a is not not b", "print 'x'", "[*a for a in b]", "x.1",
    "lambda x: int: 1", "from m import a,", "x = 1 \\ 2", "if x: if y: pass",
    "else: pass", "def f(**k, a): pass", "(a.b := 1)", "x = 1\ny = 2\nz = )",
]


def test_syntax_errors_agree(tmp_path):
    paths = write_all(tmp_path, SYNTAX_ERRORS)
    got = cella_dump(paths)
    bad = []
    for p, src in zip(paths, SYNTAX_ERRORS):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                compile(src, "x", "exec")
            want = "accepted"
        except SyntaxError as e:
            want = "%s %d" % (type(e).__name__, e.lineno)
        mine = got[p].split(" ")
        if mine[0] != "ERR" or " ".join(mine[1:3]) != want:
            bad.append("%r: cella %s, python %s" % (src, got[p], want))
    assert not bad, "\n".join(bad)
