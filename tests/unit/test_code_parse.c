/* Code mode's front end: the tokenizer's tricky inputs, precedence, every
 * construct of the subset, every refusal with its exception type, message and
 * line, the nesting, height, C-stack and memory limits, f-strings and huge
 * literals. Trees are compared as code_ast_dump's S-expressions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code/code_lex.h"
#include "code/code_parse.h"

#define DUMP_CAP (1 << 20)
static char dump[DUMP_CAP];

typedef struct parsed {
    code_mem mem;
    code_arena arena;
    code_error err;
    code_module *mod;
    int rc;
} parsed;

static void parse_opts(parsed *r, const char *src, size_t n, const code_parse_opts *o)
{
    memset(r, 0, sizeof(*r));
    code_mem_init(&r->mem, NULL, NULL, 256u << 20, 0);
    code_arena_init(&r->arena, &r->mem);
    r->rc = code_parse(src, n, o, &r->arena, &r->mod, &r->err);
}

static void done(parsed *r)
{
    code_arena_free(&r->arena);
    assert_int_equal(r->mem.bytes, 0);
}

/* Parses src and compares its dump with want. */
static void ok_at(const char *src, const char *want, int line)
{
    parsed r;
    parse_opts(&r, src, strlen(src), NULL);
    if (r.rc) {
        char b[400];
        code_error_format(&r.err, b, sizeof(b));
        print_error("test line %d: %s\n  for: %s\n", line, b, src);
        fail();
    }
    code_ast_dump(r.mod, dump, sizeof(dump));
    if (strcmp(dump, want) != 0) {
        print_error("test line %d:\n  src:  %s\n  got:  %s\n  want: %s\n", line, src, dump, want);
        fail();
    }
    done(&r);
}
#define OK(src, want) ok_at(src, want, __LINE__)

/* Parses src, which must fail with type at eline, its message containing msg. */
static void err_at(const char *src, size_t n, const char *type, int eline, const char *msg,
                   int line)
{
    parsed r;
    parse_opts(&r, src, n, NULL);
    if (r.rc == 0) {
        code_ast_dump(r.mod, dump, sizeof(dump));
        print_error("test line %d: parsed, wanted %s\n  src: %s\n  got: %s\n", line, type, src,
                    dump);
        fail();
    }
    if (strcmp(r.err.type, type) != 0 || r.err.line != eline || !strstr(r.err.msg, msg)) {
        print_error("test line %d:\n  src:  %s\n  got:  %s (line %d): %s\n  want: %s (line %d): "
                    "...%s...\n", line, src, r.err.type, r.err.line, r.err.msg, type, eline, msg);
        fail();
    }
    done(&r);
}
#define ERR(src, type, eline, msg) err_at(src, strlen(src), type, eline, msg, __LINE__)

/* The tokens of src, space-separated, names and numbers with their text. */
static const char *tokens(const char *src)
{
    static char out[4096];
    code_mem m;
    code_mem_init(&m, NULL, NULL, 0, 0);
    code_arena a;
    code_arena_init(&a, &m);
    code_error err = {0};
    code_lexer lx;
    size_t o = 0;
    out[0] = '\0';
    if (code_lex_init(&lx, src, strlen(src), &a, &err, 200) == 0) {
        for (;;) {
            code_tok t;
            if (code_lex_next(&lx, &t)) {
                o += (size_t)snprintf(out + o, sizeof(out) - o, "%s%s: %s", o ? " " : "",
                                      err.type, err.msg);
                break;
            }
            const char *name = code_tok_name(t.kind);
            if (t.kind == CODE_T_NAME || t.kind == CODE_T_INT || t.kind == CODE_T_FLOAT)
                o += (size_t)snprintf(out + o, sizeof(out) - o, "%s%s", o ? " " : "", t.s);
            else if (t.kind == CODE_T_STRING)
                o += (size_t)snprintf(out + o, sizeof(out) - o, "%sS<%.*s>", o ? " " : "",
                                      (int)t.len, t.s);
            else
                o += (size_t)snprintf(out + o, sizeof(out) - o, "%s%s", o ? " " : "",
                                      t.kind == CODE_T_NEWLINE ? "NL" : t.kind == CODE_T_INDENT
                                      ? "IN" : t.kind == CODE_T_DEDENT ? "DE"
                                      : t.kind == CODE_T_END ? "END" : name);
            if (t.kind == CODE_T_END || o >= sizeof(out) - 64)
                break;
        }
    } else {
        snprintf(out, sizeof(out), "%s: %s", err.type, err.msg);
    }
    code_arena_free(&a);
    return out;
}
#define TOKS(src, want) assert_string_equal(tokens(src), want)

/* ---- the tokenizer ---- */

static void test_tokens_lines(void **state)
{
    TOKS("", "END");
    TOKS("\n\n# only a comment\n   \n", "END");
    TOKS("x", "x NL END");
    TOKS("x = 1  # c\n", "x = 1 NL END");
    TOKS("if x:\n    y\n    z\nw\n", "if x : NL IN y NL z NL DE w NL END");
    TOKS("if x:\n  if y:\n    z\n", "if x : NL IN if y : NL IN z NL DE DE END");
    TOKS("if x:\n\n  # c\n\n  y\n", "if x : NL IN y NL DE END");
    /* a tab is up to the next multiple of 8, consistently */
    TOKS("if x:\n\ty\n\tz\n", "if x : NL IN y NL z NL DE END");
    TOKS("if x:\n\ty\n        z\n", "if x : NL IN y NL TabError: inconsistent use of tabs and "
                                  "spaces in indentation");
    TOKS("if x:\n        y\n\tz\n", "if x : NL IN y NL TabError: inconsistent use of tabs and "
                                  "spaces in indentation");
    TOKS("if x:\n    y\n  z\n", "if x : NL IN y NL IndentationError: unindent does not match "
                               "any outer indentation level");
    /* CRLF and CR line ends; a form feed resets the column */
    TOKS("if x:\r\n  y\r\nz\r", "if x : NL IN y NL DE z NL END");
    TOKS("\fx\n", "x NL END");
    /* a BOM is skipped */
    TOKS("\xEF\xBB\xBFx", "x NL END");
    /* brackets and backslashes join lines; no indentation inside */
    TOKS("x = (1,\n      2)\n", "x = ( 1 , 2 ) NL END");
    TOKS("x = [\n1\n]\n", "x = [ 1 ] NL END");
    TOKS("x = 1 + \\\n    2\n", "x = 1 + 2 NL END");
    TOKS("x = 1 \\ 2", "x = 1 SyntaxError: unexpected character after line continuation "
                      "character");
    TOKS("x = \\", "x = SyntaxError: unexpected EOF while parsing");
    TOKS("x = 1 \\\n", "x = 1 SyntaxError: unexpected EOF while parsing");
    TOKS("x = 1 \\\n  ", "x = 1 NL END");
    TOKS("(]", "( SyntaxError: closing parenthesis ']' does not match opening parenthesis '('");
    TOKS("(\n]", "( SyntaxError: closing parenthesis ']' does not match opening parenthesis "
                "'(' on line 1");
    TOKS(")", "SyntaxError: unmatched ')'");
    TOKS("x = (1,\n", "x = ( 1 , SyntaxError: '(' was never closed");
    /* ASCII characters Python has no use for are the parser's "invalid syntax" */
    TOKS("a $ b ? ` !", "a an invalid character b an invalid character an invalid character "
                        "an invalid character NL END");
    TOKS("a\x01", "a SyntaxError: invalid non-printable character U+0001");
    TOKS("x = '\xff'", "SyntaxError: (unicode error) source is not valid UTF-8");
    TOKS("x = '\xed\xa0\x80'", "SyntaxError: (unicode error) source is not valid UTF-8");
    /* non-ASCII names; characters that are surely not identifiers */
    TOKS("caf\xc3\xa9 = 1", "caf\xc3\xa9 = 1 NL END");
    TOKS("\xce\xb1\xce\xb2 = \xe5\x90\x8d\xf0\xa0\x80\x80", "\xce\xb1\xce\xb2 = \xe5\x90\x8d\xf0\xa0\x80\x80 NL END");
    TOKS("x = \xe2\x80\x9chi\xe2\x80\x9d", "x = SyntaxError: invalid character '\xe2\x80\x9c' (U+201C)");
    TOKS("a\xc2\xa0= 1", "SyntaxError: invalid non-printable character U+00A0");
    TOKS("ab\xe2\x80\xae" "cd", "SyntaxError: invalid non-printable character U+202E");
    TOKS("x\xe2\x80\x8b", "SyntaxError: invalid non-printable character U+200B");
    TOKS("\xf3\x9d\x8d\x8d", "SyntaxError: invalid non-printable character U+DD34D");
    TOKS("\xf3\xa5\x8d\x8d", "SyntaxError: invalid non-printable character U+E534D");
    TOKS("\xe2\xbd\x87", "SyntaxError: invalid character '\xe2\xbd\x87' (U+2F47)");
    TOKS("\xc2\xb7" "a", "SyntaxError: invalid character '\xc2\xb7' (U+00B7)");
    TOKS("\xc2\xb5 = a\xc2\xb7" "b", "\xc2\xb5 = a\xc2\xb7" "b NL END");   /* as CPython: letters */
    TOKS("'\xe2\x80\xae' # \xe2\x80\x9c", "S<\xe2\x80\xae> NL END");   /* fine in strings and comments */
    /* keywords, soft keywords stay names */
    TOKS("match case _ type", "match case _ type NL END");
    TOKS("not in is and or", "not in is and or NL END");
}

static void test_tokens_operators(void **state)
{
    TOKS("a := b -> c ** d **= e // f //= g", "a := b -> c ** d **= e // f //= g NL END");
    TOKS("<<= >>= << >> <= >= == != < > = ...", "<<= >>= << >> <= >= == != < > = ... NL END");
    TOKS("+= -= *= /= %= &= |= ^= @= @ ~", "+= -= *= /= %= &= |= ^= @= @ ~ NL END");
    TOKS("x.y ; a , b :", "x . y ; a , b : NL END");
    TOKS("x...y", "x ... y NL END");
}

static void test_tokens_numbers(void **state)
{
    TOKS("0 00 0_0 7 1_000 123456789012345678901234567890",
         "0 00 00 7 1000 123456789012345678901234567890 NL END");
    /* hex, octal and binary keep their digits; the base is the token's */
    TOKS("0x_FF 0o7_7 0B1_0 0XdeadBEEF", "FF 77 10 deadBEEF NL END");
    TOKS("1.5 .5 5. 1e10 1E-3 1_0.0_1e+1_0 0.0", "1.5 .5 5. 1e10 1e-3 10.01e+10 0.0 NL END");
    TOKS("1if x else 2", "1 if x else 2 NL END");
    TOKS("0x1for", "1f or NL END");
    TOKS("012", "SyntaxError: leading zeros in decimal integer literals are not permitted; use an "
               "0o prefix for octal integers");
    TOKS("1__0", "SyntaxError: invalid decimal literal");
    TOKS("1_", "SyntaxError: invalid decimal literal");
    TOKS("1abc", "SyntaxError: invalid decimal literal");
    TOKS("1.e", "SyntaxError: invalid decimal literal");
    TOKS("0x", "SyntaxError: invalid hexadecimal literal");
    TOKS("0xg", "SyntaxError: invalid hexadecimal literal");
    TOKS("0o8", "SyntaxError: invalid digit '8' in octal literal");
    TOKS("0b102", "SyntaxError: invalid digit '2' in binary literal");
    TOKS("0b", "SyntaxError: invalid binary literal");
    TOKS("3j", "NotImplementedError: complex numbers (the 'j' suffix) are not supported");
    TOKS("1.5J", "NotImplementedError: complex numbers (the 'j' suffix) are not supported");
    OK("x = 0x_ff + 0o17 + 0b1 + 1e999 + 2.5e-3 + 1_0.5",
       "(= x (+ (+ (+ (+ (+ 0xff 0o17) 0b1) inf) 0.0025) 10.5))");
}

static void test_tokens_strings(void **state)
{
    TOKS("'a' \"b\" '''c\nd''' \"\"\"e\"\"\"", "S<a> S<b> S<c\nd> S<e> NL END");
    TOKS("u'x' r'\\n' R'\\'' b'x' br'\\x' Rb'y' bR'z'",
         "S<x> S<\\n> S<\\'> S<x> S<\\x> S<y> S<z> NL END");
    TOKS("'\\n\\t\\\\\\'\\\"\\a\\x41\\101\\u00e9\\U0001F600\\q'",
         "S<\n\t\\'\"\aAA\xc3\xa9\xf0\x9f\x98\x80\\q> NL END");
    TOKS("b'\\xff\\u1234'", "S<\xff\\u1234> NL END");
    TOKS("'a\\\nb'", "S<ab> NL END");
    TOKS("'''a\r\nb'''", "S<a\nb> NL END");
    TOKS("ur'x'", "ur S<x> NL END");     /* not a prefix: a name, then a string */
    TOKS("'abc", "SyntaxError: unterminated string literal (detected at line 1)");
    TOKS("'abc\n'", "SyntaxError: unterminated string literal (detected at line 1)");
    TOKS("'''abc\n\n", "SyntaxError: unterminated triple-quoted string literal (detected at "
                      "line 3)");
    TOKS("'\\x4'", "SyntaxError: (unicode error) 'unicodeescape' codec can't decode bytes: "
                  "truncated \\xXX escape");
    TOKS("'\\U00110000'", "SyntaxError: (unicode error) 'unicodeescape' codec can't decode "
                         "bytes: illegal Unicode character");
    TOKS("'\\ud800'", "NotImplementedError: lone surrogates (\\uD800) are not supported in "
                     "strings");
    TOKS("'\\N{BULLET}'", "NotImplementedError: \\N{...} escapes (Unicode character names) are "
                         "not supported; use \\u or \\U");
    TOKS("b'\xc3\xa9'", "SyntaxError: bytes can only contain ASCII literal characters");
    TOKS("b'\\x4'", "SyntaxError: (value error) invalid \\x escape");
    OK("'a' \"b\" '''c'''", "(expr 'abc')");
    OK("b'a' b'\\x00'", "(expr b'a\\x00')");
    OK("'' '' ''", "(expr '')");          /* empty pieces (found by the fuzzer: UB) */
    OK("'' f'' ''", "(expr (f))");
    OK("'' 'a'", "(expr 'a')");
    ERR("'a' b'b'", "SyntaxError", 1, "cannot mix bytes and nonbytes literals");
    ERR("x = 1\ny = '''\n\nz", "SyntaxError", 2,
        "unterminated triple-quoted string literal (detected at line 4)");
}

static void test_fstrings(void **state)
{
    OK("f'a{x}b'", "(expr (f 'a' (fmt x) 'b'))");
    OK("f'{x!r} {y!s:>10} {z!a}'", "(expr (f (fmt x !r) ' ' (fmt y !s (f '>10')) ' ' (fmt z !a)))");
    OK("f'{x:{w}.{p}f}'", "(expr (f (fmt x (f (fmt w) '.' (fmt p) 'f'))))");
    OK("f'{{}} {{x}}'", "(expr (f '{} {x}'))");
    OK("f''", "(expr (f))");
    OK("f'{x=}'", "(expr (f 'x=' (fmt x !r)))");
    OK("f'{x = :>4}'", "(expr (f 'x = ' (fmt x (f '>4'))))");
    OK("f'{x=!s}'", "(expr (f 'x=' (fmt x !s)))");
    OK("f'{a == b}{a != b}{a <= b}'",
       "(expr (f (fmt (cmp a == b)) (fmt (cmp a != b)) (fmt (cmp a <= b))))");
    OK("f'{d[\"k\"]}' f\"{d['k']}\"", "(expr (f (fmt ([] d 'k')) (fmt ([] d 'k'))))");
    OK("f'''{f\"{x}\"}'''", "(expr (f (fmt (f (fmt x)))))");
    OK("f'{a, b}'", "(expr (f (fmt (tuple a b))))");
    OK("f'{(x := 1)}'", "(expr (f (fmt (:= x 1))))");
    OK("f'{x:=5}'", "(expr (f (fmt x (f '=5'))))");    /* a format spec, as in CPython */
    OK("f'{ {1: 2}[1] }'", "(expr (f (fmt ([] (dict (1 2)) 1))))");
    OK("f'{lambda_x}'", "(expr (f (fmt lambda_x)))");
    OK("f'\\n{x}\\t'", "(expr (f '\\n' (fmt x) '\\t'))");
    OK("rf'\\n{x}'", "(expr (f '\\\\n' (fmt x)))");
    OK("'a' f'{b}' 'c'", "(expr (f 'a' (fmt b) 'c'))");
    OK("f'''{\nx\n}'''", "(expr (f (fmt x)))");
    OK("print(f'{x!r:^{n}}', end='')",
       "(expr (call print (f (fmt x !r (f '^' (fmt n)))) (kw end '')))");
    ERR("f'{}'", "SyntaxError", 1, "f-string: empty expression not allowed");
    ERR("f'{ }'", "SyntaxError", 1, "f-string: empty expression not allowed");
    ERR("f'}'", "SyntaxError", 1, "f-string: single '}' is not allowed");
    ERR("f'{x'", "SyntaxError", 1, "f-string: expecting '}'");
    ERR("f'{x!}'", "SyntaxError", 1, "f-string: invalid conversion character");
    ERR("f'{x!z}'", "SyntaxError", 1, "f-string: invalid conversion character");
    ERR("f'{x#}'", "SyntaxError", 1, "f-string expression part cannot include '#'");
    ERR("f'{\\'x\\'}'", "SyntaxError", 1, "f-string expression part cannot include a backslash");
    ERR("f'{a:{b:{c}}}'", "SyntaxError", 1, "f-string: expressions nested too deeply");
    ERR("f'{a b}'", "SyntaxError", 1, "f-string: invalid syntax");
    ERR("f'{*a}'", "SyntaxError", 1, "can't use starred expression here");
    ERR("f'{x)}'", "SyntaxError", 1, "f-string: unmatched ')'");
    ERR("f'{yield}'", "NotImplementedError", 1, "'yield' is not supported");
    ERR("x = 1\ny = f'''\n{a +}'''", "SyntaxError", 3, "f-string: invalid syntax");
    ERR("f'{x}' b'y'", "SyntaxError", 1, "cannot mix bytes and nonbytes literals");
    ERR("f'\\N{DASH}{x}'", "NotImplementedError", 1, "\\N{...} escapes");
}

/* ---- expressions ---- */

static void test_precedence(void **state)
{
    OK("1 + 2 * 3", "(expr (+ 1 (* 2 3)))");
    OK("(1 + 2) * 3", "(expr (* (+ 1 2) 3))");
    OK("1 - 2 - 3", "(expr (- (- 1 2) 3))");
    OK("2 ** 3 ** 2", "(expr (** 2 (** 3 2)))");
    OK("-2 ** -1", "(expr (neg (** 2 (neg 1))))");
    OK("~x + +y - -z", "(expr (- (+ (~ x) (pos y)) (neg z)))");
    OK("a // b % c / d * e", "(expr (* (/ (% (// a b) c) d) e))");
    OK("a << b + c >> d", "(expr (>> (<< a (+ b c)) d))");
    OK("a | b ^ c & d", "(expr (| a (^ b (& c d))))");
    OK("a & b | c ^ d", "(expr (| (& a b) (^ c d)))");
    OK("a | b < c", "(expr (cmp (| a b) < c))");
    OK("a < b <= c == d != e > f >= g", "(expr (cmp a < b <= c == d != e > f >= g))");
    OK("a in b not in c is d is not e", "(expr (cmp a in b not in c is d is not e))");
    OK("not a == b", "(expr (not (cmp a == b)))");
    OK("not a and b or c and not d", "(expr (or (and (not a) b) (and c (not d))))");
    OK("a or b or c", "(expr (or a b c))");
    OK("a and b and c", "(expr (and a b c))");
    OK("a if b else c if d else e", "(expr (ifexp b a (ifexp d c e)))");
    OK("a or b if c and d else e", "(expr (ifexp (and c d) (or a b) e))");
    OK("lambda: a if b else c", "(expr (lambda (params) (ifexp b a c)))");
    OK("x = lambda a, b=1: a + b", "(= x (lambda (params a b=1) (+ a b)))");
    OK("f(x)(y)[z].w", "(expr (. ([] (call (call f x) y) z) w))");
    OK("-x.y ** 2", "(expr (neg (** (. x y) 2)))");
    OK("a[1][2:3]", "(expr ([] ([] a 1) (slice 2 3 _)))");
    OK("not not not x", "(expr (not (not (not x))))");
    OK("- - x", "(expr (neg (neg x)))");
    OK("1 if x else 2, 3", "(expr (tuple (ifexp x 1 2) 3))");
    OK("x = 1,", "(= x (tuple 1))");
    OK("(1)", "(expr 1)");
    OK("(1,)", "(expr (tuple 1))");
    OK("()", "(expr (tuple))");
    ERR("a is not not b", "SyntaxError", 1, "invalid syntax");   /* as CPython */
}

static void test_atoms_and_displays(void **state)
{
    OK("None, True, False, ..., 'x', b'y', 1.5, x",
       "(expr (tuple None True False ... 'x' b'y' 1.5 x))");
    OK("[1, 2, *a,]", "(expr (list 1 2 (* a)))");
    OK("[]", "(expr (list))");
    OK("{}", "(expr (dict))");
    OK("{1: 2, 'a': b, **c,}", "(expr (dict (1 2) ('a' b) (** c)))");
    OK("{1, 2, *s}", "(expr (set 1 2 (* s)))");
    OK("{x}", "(expr (set x))");
    OK("[x for x in y]", "(expr (listcomp x (for x y)))");
    OK("[x * y for x in a if x for y in b if y if x < y]",
       "(expr (listcomp (* x y) (for x a (if x)) (for y b (if y) (if (cmp x < y)))))");
    OK("{k: v for k, v in d.items()}", "(expr (dictcomp k v (for (tuple k v) (call (. d items)))))");
    OK("{x for x in s}", "(expr (setcomp x (for x s)))");
    OK("(x for x in s)", "(expr (genexp x (for x s)))");
    OK("sum(x for x in s)", "(expr (call sum (genexp x (for x s))))");
    OK("[x for x in (a if b else c)]", "(expr (listcomp x (for x (ifexp b a c))))");
    OK("[y for x in z if (y := f(x))]",
       "(expr (listcomp y (for x z (if (:= y (call f x))))))");
    OK("[(a, b) for a, *b in c]", "(expr (listcomp (tuple a b) (for (tuple a (* b)) c)))");
    ERR("[x for x in lambda: y]", "SyntaxError", 1, "invalid syntax");   /* as CPython */
    OK("{**a, **b}", "(expr (dict (** a) (** b)))");
    OK("[[1, [2]], {3: (4,)}]", "(expr (list (list 1 (list 2)) (dict (3 (tuple 4)))))");
    OK("x[1:2], x[:], x[::2], x[a:b:c], x[1:], x[:2]",
       "(expr (tuple ([] x (slice 1 2 _)) ([] x (slice _ _ _)) ([] x (slice _ _ 2)) "
       "([] x (slice a b c)) ([] x (slice 1 _ _)) ([] x (slice _ 2 _))))");
    OK("x[1, 2:3]", "(expr ([] x (tuple 1 (slice 2 3 _))))");
    OK("x[1,]", "(expr ([] x (tuple 1)))");
    OK("x[y := 1]", "(expr ([] x (:= y 1)))");
    OK("f(a, *b, c=1, **d, e=2)", "(expr (call f a (* b) (kw c 1) (** d) (kw e 2)))");
    OK("f(*a, *b)", "(expr (call f (* a) (* b)))");
    OK("f(a,)", "(expr (call f a))");
    OK("f(x := 1)", "(expr (call f (:= x 1)))");
    OK("print(*xs, sep=', ', end='')", "(expr (call print (* xs) (kw sep ', ') (kw end '')))");
    OK("sorted(d, key=lambda k: -d[k])",
       "(expr (call sorted d (kw key (lambda (params k) (neg ([] d k))))))");
    OK("(yield_ := 1)", "(expr (:= yield_ 1))");
    ERR("[*a for a in b]", "SyntaxError", 1, "iterable unpacking cannot be used in comprehension");
    ERR("{*a: 1}", "SyntaxError", 1, "cannot use a starred expression in a dictionary value");
    ERR("(*a)", "SyntaxError", 1, "cannot use starred expression here");
    ERR("f(x for x in y, 1)", "SyntaxError", 1, "Generator expression must be parenthesized");
    ERR("f(a=1, b)", "SyntaxError", 1, "positional argument follows keyword argument");
    ERR("f(**a, b)", "SyntaxError", 1, "positional argument follows keyword argument unpacking");
    ERR("f(**a, *b)", "SyntaxError", 1,
        "iterable argument unpacking follows keyword argument unpacking");
    ERR("f(a=1, a=2)", "SyntaxError", 1, "keyword argument repeated: a");
    ERR("f(a.b=1)", "SyntaxError", 1, "expression cannot contain assignment");
    ERR("f((a)=1)", "SyntaxError", 1, "expression cannot contain assignment");
    ERR("(a.b := 1)", "SyntaxError", 1, "cannot use assignment expressions with attribute");
    ERR("[x for x in 1, 2]", "SyntaxError", 1, "invalid syntax");
    ERR("x.1", "SyntaxError", 1, "invalid syntax");
    ERR("x.", "SyntaxError", 1, "invalid syntax");
    ERR("a if b", "SyntaxError", 1, "expected 'else' after 'if' expression");
    ERR("a not b", "SyntaxError", 1, "invalid syntax");
    ERR("x[*a]", "NotImplementedError", 1, "starred expressions in subscripts");
}

/* ---- statements ---- */

static void test_statements(void **state)
{
    OK("x = 1", "(= x 1)");
    OK("a = b = c = 0", "(= a b c 0)");
    OK("a, b = b, a", "(= (tuple a b) (tuple b a))");
    OK("[a, (b, *c)] = x", "(= (list a (tuple b (* c))) x)");
    OK("a.b[c].d = e", "(= (. ([] (. a b) c) d) e)");
    OK("x[1:2] = y", "(= ([] x (slice 1 2 _)) y)");
    OK("*a, b = c", "(= (tuple (* a) b) c)");
    OK("x = *a, *b", "(= x (tuple (* a) (* b)))");
    OK("x += 1; y //= 2; z **= 3; w >>= 4", "(+= x 1)\n(//= y 2)\n(**= z 3)\n(>>= w 4)");
    OK("a.b -= 1; c[d] |= e", "(-= (. a b) 1)\n(|= ([] c d) e)");
    OK("x: int = 1", "(ann x int 1)");
    OK("x: list[int]", "(ann x ([] list int))");
    OK("d['k']: str = 'v'", "(ann ([] d 'k') str 'v')");
    OK("if a:\n    b\nelif c:\n    d\nelif e: f\nelse:\n    g",
       "(if a ((expr b)) c ((expr d)) e ((expr f)) else ((expr g)))");
    OK("if a: b; c", "(if a ((expr b) (expr c)))");
    OK("while x:\n    break\nelse:\n    pass", "(while x ((break)) else ((pass)))");
    OK("while (n := n - 1): continue", "(while (:= n (- n 1)) ((continue)))");
    OK("for i in range(10):\n    if i: continue\nelse: pass",
       "(for i (call range 10) ((if i ((continue)))) else ((pass)))");
    OK("for k, v in d.items(): pass", "(for (tuple k v) (call (. d items)) ((pass)))");
    OK("for x in 1, 2: pass", "(for x (tuple 1 2) ((pass)))");
    OK("for x, in y: pass", "(for (tuple x) y ((pass)))");
    OK("for a.b in c: pass", "(for (. a b) c ((pass)))");
    OK("def f(): pass", "(def f (params) ((pass)))");
    OK("def f(a, b=1, *args, c, d=2, **kw): return a",
       "(def f (params a b=1 *args c d=2 **kw) ((return a)))");
    OK("def f(a, /, b, *, c): return", "(def f (params a / b * c) ((return)))");
    OK("def f(*args): pass", "(def f (params *args) ((pass)))");
    OK("def f(x: int = 0, *a: str, **k: dict) -> list[int]:\n    return [x]",
       "(def f (params x:int=0 *a **k) -> ([] list int) ((return (list x))))");
    OK("def f(a,): pass", "(def f (params a) ((pass)))");
    OK("def f():\n    return 1, *a", "(def f (params) ((return (tuple 1 (* a)))))");
    OK("async def f():\n    x = await g(1)\n    return await asyncio.gather(a(), b())",
       "(async def f (params) ((= x (await (call g 1))) (return (await (call (. asyncio gather) "
       "(call a) (call b))))))");
    OK("async def f(): return [await x for x in y]",
       "(async def f (params) ((return (listcomp (await x) (for x y)))))");
    OK("def f():\n    def g():\n        nonlocal x\n        global y\n        x = y = 1\n    g()",
       "(def f (params) ((def g (params) ((nonlocal x) (global y) (= x y 1))) (expr (call g))))");
    OK("global a, b", "(global a b)");
    OK("try:\n    x\nexcept ValueError as e:\n    raise TypeError('t') from e\n"
       "except (KeyError, IndexError):\n    pass\nexcept:\n    raise\nelse:\n    y\n"
       "finally:\n    z",
       "(try ((expr x)) (except ValueError as e ((raise (call TypeError 't') from e))) "
       "(except (tuple KeyError IndexError) ((pass))) (except _ ((raise))) else ((expr y)) "
       "finally ((expr z)))");
    OK("try: x\nfinally: y", "(try ((expr x)) finally ((expr y)))");
    OK("raise", "(raise)");
    OK("raise ValueError", "(raise ValueError)");
    OK("assert x", "(assert x)");
    OK("assert x > 0, 'x must be positive'", "(assert (cmp x > 0) 'x must be positive')");
    OK("import json", "(import json)");
    OK("import json as j, math, os.path", "(import json as j math os.path)");
    OK("from datetime import datetime, timedelta as td",
       "(from datetime import datetime timedelta as td)");
    OK("from math import (\n    sqrt,\n    pi,\n)", "(from math import sqrt pi)");
    OK("from os.path import join", "(from os.path import join)");
    OK("pass\n\n\npass\n", "(pass)\n(pass)");
    OK("x = 1;", "(= x 1)");
    OK("# just a comment", "");
    OK("", "");
    OK("if x:\n    pass\n# trailing comment, no newline", "(if x ((pass)))");
    OK("if x:\n    if y:\n        pass\n    z\nw", "(if x ((if y ((pass))) (expr z)))\n(expr w)");
    OK("match = re.match(p, s)\nmatch.group(0)\nmatch(x)\nmatch[0]\nmatch: int = 1\ncase = 1",
       "(= match (call (. re match) p s))\n(expr (call (. match group) 0))\n(expr (call match x))"
       "\n(expr ([] match 0))\n(ann match int 1)\n(= case 1)");
    OK("x = [\n    1,\n    2,\n]\ny = {\n    'a': 1,\n}", "(= x (list 1 2))\n(= y (dict ('a' 1)))");
    OK("result = total", "(= result total)");
    OK("while True:\n    try:\n        break\n    finally:\n        pass",
       "(while True ((try ((break)) finally ((pass)))))");
    OK("for x in y:\n    z = lambda: x", "(for x y ((= z (lambda (params) x))))");
}

static void test_syntax_errors(void **state)
{
    ERR("x = ", "SyntaxError", 1, "invalid syntax");
    ERR("x = = 1", "SyntaxError", 1, "invalid syntax");
    ERR("1 = x", "SyntaxError", 1, "cannot assign to literal");
    ERR("f() = 1", "SyntaxError", 1, "cannot assign to function call");
    ERR("a + b = c", "SyntaxError", 1, "cannot assign to expression");
    ERR("x = 1\n(a, f()) = y", "SyntaxError", 2, "cannot assign to function call");
    ERR("a, b += 1", "SyntaxError", 1, "'tuple' is an illegal expression for augmented assignment");
    ERR("f() += 1", "SyntaxError", 1, "'function call' is an illegal expression for augmented");
    ERR("*a = 1", "SyntaxError", 1, "starred assignment target must be in a list or tuple");
    ERR("*a, *b = 1", "SyntaxError", 1, "multiple starred expressions in assignment");
    ERR("x = *a", "SyntaxError", 1, "can't use starred expression here");
    ERR("*a", "SyntaxError", 1, "can't use starred expression here");
    ERR("x := 1", "SyntaxError", 1, "assignment expression needs parentheses");
    ERR("a, b: int", "SyntaxError", 1, "only single target (not tuple) can be annotated");
    ERR("f(): int", "SyntaxError", 1, "illegal target for annotation");
    ERR("for f() in x: pass", "SyntaxError", 1, "cannot assign to function call");
    ERR("[x for 1 in y]", "SyntaxError", 1, "cannot assign to literal");
    ERR("if x\n    pass", "SyntaxError", 1, "expected ':'");
    ERR("if x:\npass", "IndentationError", 2, "expected an indented block after 'if' statement "
                                              "on line 1");
    ERR("def f():\n\nx", "IndentationError", 3, "expected an indented block after function "
                                                "definition on line 1");
    ERR("for x in y:\n# c\n", "IndentationError", 2, "expected an indented block after 'for'");
    ERR("if x:\n", "IndentationError", 1, "expected an indented block");   /* CPython's lines */
    ERR("def f(n):\n \\\n\n0", "IndentationError", 4,                /* found by fuzzing */
        "expected an indented block after function definition on line 1");
    ERR("if x:\n\n\n", "IndentationError", 3, "expected an indented block");
    ERR("x = $", "SyntaxError", 1, "invalid syntax");
    ERR("a ! b", "SyntaxError", 1, "invalid syntax");
    /* after the parser's error, a tokenizer error later in the source wins, as in CPython */
    ERR("x = 1 $ \"unterminated", "SyntaxError", 1, "unterminated string literal");
    ERR("f(a b\nc = 'x", "SyntaxError", 2, "unterminated string literal");
    ERR("x = = 1\ny = 0o9", "SyntaxError", 2, "invalid digit '9' in octal literal");
    ERR("class A: pass\nx = (]", "SyntaxError", 2, "closing parenthesis ']' does not match");
    ERR("x = (1,\n2 3", "SyntaxError", 1, "'(' was never closed");
    /* ... but not an open bracket after the error's line, nor the errors CPython reports
     * only when its parser reaches them, nor after "unexpected indent" */
    ERR("x = $\n(", "SyntaxError", 1, "invalid syntax");
    ERR("x = '\\x4'\ny = 'abc", "SyntaxError", 2, "unterminated string literal");
    ERR("x = '\\x4'\ny = 1", "SyntaxError", 1, "truncated \\xXX escape");
    /* errors CPython finds after parsing (symbol table, compiler) come after syntax errors */
    ERR("return 1\nx = = 2", "SyntaxError", 2, "invalid syntax");
    ERR("def f(a, a): pass\nx = (", "SyntaxError", 2, "'(' was never closed");
    ERR("break\nf(a=1, a=2)", "SyntaxError", 1, "'break' outside loop");
    /* a missing comma inside brackets, at the expression before it */
    ERR("f(a b)", "SyntaxError", 1, "invalid syntax. Perhaps you forgot a comma?");
    ERR("f(a,\n  b c)", "SyntaxError", 2, "Perhaps you forgot a comma?");
    ERR("x = [1,\n 2\n 3]", "SyntaxError", 2, "Perhaps you forgot a comma?");
    ERR("(a b)", "SyntaxError", 1, "Perhaps you forgot a comma?");
    ERR("x[1 2]", "SyntaxError", 1, "Perhaps you forgot a comma?");
    ERR("{1 2}", "SyntaxError", 1, "Perhaps you forgot a comma?");
    ERR("{1: 2 3: 4}", "SyntaxError", 1, "Perhaps you forgot a comma?");
    ERR("print('a' 'b' c)", "SyntaxError", 1, "Perhaps you forgot a comma?");
    ERR("f(x y=1)", "SyntaxError", 1, "Perhaps you forgot a comma?");
    ERR("f'{a b}'", "SyntaxError", 1, "f-string: invalid syntax. Perhaps you forgot a comma?");
    ERR("f(a 'it')", "SyntaxError", 1, "invalid syntax");   /* NAME STRING: no hint */
    ERR("x = 1 +\ny = (1,", "SyntaxError", 1, "invalid syntax");
    ERR("x = = 1\nif x:\n  a\n b", "SyntaxError", 1, "invalid syntax");
    ERR("x = = 1\ny = 1 \\ 2", "SyntaxError", 1, "invalid syntax");
    ERR("  x\ny = \"abc", "IndentationError", 1, "unexpected indent");
    ERR("  x = 1", "IndentationError", 1, "unexpected indent");
    ERR("x = 1\n    y = 2", "IndentationError", 2, "unexpected indent");
    ERR("if x:\n    a\n  b", "IndentationError", 3, "unindent does not match");
    ERR("if x:\n\ta\n        b", "TabError", 3, "inconsistent use of tabs and spaces");
    ERR("else: pass", "SyntaxError", 1, "'else' without a matching statement");
    ERR("if x: if y: pass", "SyntaxError", 1, "invalid syntax");
    ERR("return 1", "SyntaxError", 1, "'return' outside function");
    ERR("x = 1\nbreak", "SyntaxError", 2, "'break' outside loop");
    ERR("continue", "SyntaxError", 1, "'continue' not properly in loop");
    ERR("for x in y:\n    def f():\n        break", "SyntaxError", 3, "'break' outside loop");
    ERR("while x:\n    f = lambda: (yield)", "NotImplementedError", 2, "'yield'");
    ERR("nonlocal x", "SyntaxError", 1, "nonlocal declaration not allowed at module level");
    ERR("await x", "SyntaxError", 1, "'await' outside function");
    ERR("def f():\n    await x", "SyntaxError", 2, "'await' outside async function");
    ERR("async def f():\n    g = lambda: await x", "SyntaxError", 2,
        "'await' outside async function");
    ERR("async x", "SyntaxError", 1, "invalid syntax");
    ERR("def f(a, a): pass", "SyntaxError", 1, "duplicate argument 'a' in function definition");
    ERR("def f(a, *a): pass", "SyntaxError", 1, "duplicate argument 'a'");
    ERR("def f(a=1, b): pass", "SyntaxError", 1, "non-default argument follows default argument");
    ERR("def f(*): pass", "SyntaxError", 1, "named arguments must follow bare *");
    ERR("def f(*, **k): pass", "SyntaxError", 1, "named arguments must follow bare *");
    ERR("def f(*a, *b): pass", "SyntaxError", 1, "* argument may appear only once");
    ERR("def f(**k, a): pass", "SyntaxError", 1, "arguments cannot follow var-keyword argument");
    ERR("def f(/): pass", "SyntaxError", 1, "at least one argument must precede /");
    ERR("def f(a, /, b, /): pass", "SyntaxError", 1, "/ may appear only once");
    ERR("def f(*a, /): pass", "SyntaxError", 1, "/ must be ahead of *");
    ERR("def f(*a=1): pass", "SyntaxError", 1, "var-positional argument cannot have default");
    ERR("def f(**a=1): pass", "SyntaxError", 1, "var-keyword argument cannot have default");
    ERR("lambda x: int: 1", "SyntaxError", 1, "illegal target for annotation");
    ERR("def f()\n    pass", "SyntaxError", 1, "expected ':'");
    ERR("try:\n    pass", "SyntaxError", 2, "expected 'except' or 'finally' block");
    ERR("try:\n    pass\nelse:\n    pass", "SyntaxError", 3, "expected 'except' or 'finally'");
    ERR("try:\n    pass\nexcept:\n    pass\nexcept E:\n    pass", "SyntaxError", 3,
        "default 'except:' must be last");
    ERR("try:\n    pass\nexcept A, B:\n    pass", "SyntaxError", 3,
        "multiple exception types must be parenthesized");
    ERR("import", "SyntaxError", 1, "invalid syntax");
    ERR("from math import", "SyntaxError", 1, "invalid syntax");
    ERR("from math import a,", "SyntaxError", 1, "trailing comma not allowed");
    ERR("from math sqrt", "SyntaxError", 1, "invalid syntax");
    ERR("x = (1,\n2", "SyntaxError", 1, "'(' was never closed");
    ERR("print 'x'", "SyntaxError", 1, "invalid syntax");
    ERR("x = 1 +", "SyntaxError", 1, "invalid syntax");
    ERR("def", "SyntaxError", 1, "invalid syntax");
    ERR("x = [1, 2", "SyntaxError", 1, "'[' was never closed");
    ERR("a b", "SyntaxError", 1, "invalid syntax");
    ERR("x = 1\ny = 2\nz = )", "SyntaxError", 3, "unmatched ')'");
}

/* Constructs the subset refuses: NotImplementedError naming each, with its line. */
static void test_refusals(void **state)
{
    ERR("x = 1\nclass A:\n    pass", "NotImplementedError", 2, "class definitions are not supported");
    ERR("yield 1", "NotImplementedError", 1, "'yield' is not supported");
    ERR("def f():\n    x = yield", "NotImplementedError", 2, "'yield' is not supported");
    ERR("def f():\n    yield from g()", "NotImplementedError", 2, "'yield' is not supported");
    ERR("def f():\n    x += yield", "NotImplementedError", 2, "'yield' is not supported");
    ERR("def f(): return (yield)", "NotImplementedError", 1, "'yield' is not supported");
    ERR("match x:\n    case 1:\n        pass", "NotImplementedError", 1,
        "'match' statements are not supported");
    ERR("match (x):\n    case 1:\n        pass", "NotImplementedError", 1, "'match' statements");
    ERR("match [a, b]:\n    case _: pass", "NotImplementedError", 1, "'match' statements");
    ERR("match -x:\n    case _: pass", "NotImplementedError", 1, "'match' statements");
    ERR("match {1: 2}:\n    case _: pass", "NotImplementedError", 1, "'match' statements");
    ERR("x = [1]\ndel x[0]", "NotImplementedError", 2, "'del' statements are not supported");
    ERR("with open('f') as f:\n    pass", "NotImplementedError", 1, "'with' statements");
    ERR("async def f():\n    async with a: pass", "NotImplementedError", 2, "'async with'");
    ERR("async def f():\n    async for x in y: pass", "NotImplementedError", 2, "'async for'");
    ERR("async def f():\n    return [x async for x in y]", "NotImplementedError", 2,
        "asynchronous comprehensions");
    ERR("@decorator\ndef f(): pass", "NotImplementedError", 1, "decorators are not supported");
    ERR("x = a @ b", "NotImplementedError", 1, "the '@' operator");
    ERR("x @= b", "NotImplementedError", 1, "the '@=' operator");
    ERR("x = 2j", "NotImplementedError", 1, "complex numbers");
    ERR("from . import x", "NotImplementedError", 1, "relative imports are not supported");
    ERR("from .. import x", "NotImplementedError", 1, "relative imports");
    ERR("from ...a import x", "NotImplementedError", 1, "relative imports");
    ERR("from json import *", "NotImplementedError", 1, "'from json import *' is not supported");
    ERR("try:\n    pass\nexcept* E:\n    pass", "NotImplementedError", 3, "'except*'");
    ERR("x = '\\N{BULLET}'", "NotImplementedError", 1, "\\N{...} escapes");
    ERR("x = '\\udc80'", "NotImplementedError", 1, "lone surrogates");
    ERR("x[*a]", "NotImplementedError", 1, "starred expressions in subscripts");
    /* imports of other modules parse: they fail when they run (ModuleNotFoundError) */
    OK("import os", "(import os)");
    assert_true(code_module_known("json"));
    assert_true(code_module_known("math"));
    assert_true(code_module_known("re"));
    assert_true(code_module_known("datetime"));
    assert_true(code_module_known("asyncio"));
    assert_false(code_module_known("os"));
    assert_false(code_module_known("json.decoder"));
    assert_false(code_module_known(""));
}

/* ---- limits ---- */

static char *repeat(const char *pre, int n, const char *mid, const char *post)
{
    size_t pl = strlen(pre), ml = strlen(mid), ql = strlen(post);
    char *s = malloc((size_t)n * (pl + ql) + ml + 1);
    size_t k = 0;
    for (int i = 0; i < n; i++, k += pl)
        memcpy(s + k, pre, pl);
    memcpy(s + k, mid, ml);
    k += ml;
    for (int i = 0; i < n; i++, k += ql)
        memcpy(s + k, post, ql);
    s[k] = '\0';
    return s;
}

static void deep_fails(const char *pre, int n, const char *mid, const char *post,
                       const char *type, const code_parse_opts *o)
{
    char *s = repeat(pre, n, mid, post);
    parsed r;
    parse_opts(&r, s, strlen(s), o);
    if (r.rc == 0 || strcmp(r.err.type, type) != 0) {
        print_error("%d x '%s': rc %d, %s: %s\n", n, pre, r.rc, r.err.type ? r.err.type : "-",
                    r.err.msg);
        fail();
    }
    done(&r);
    free(s);
}

static void deep_ok(const char *pre, int n, const char *mid, const char *post,
                    const code_parse_opts *o)
{
    char *s = repeat(pre, n, mid, post);
    parsed r;
    parse_opts(&r, s, strlen(s), o);
    if (r.rc) {
        print_error("%d x '%s': %s: %s\n", n, pre, r.err.type, r.err.msg);
        fail();
    }
    done(&r);
    free(s);
}

static void test_depth_limits(void **state)
{
    /* hostile nesting fails cleanly at the default limit (200) */
    const char *const pres[] = {"(", "[", "{", "-", "~", "+", "not ", "x[", "f(", "{1: ",
                                "lambda: ", "1 if 1 else ", "2 ** ", "*(", "[*", "{**",
                                "(x := ", "await "};
    for (size_t i = 0; i < sizeof(pres) / sizeof(pres[0]); i++) {
        deep_fails(pres[i], 100000, "1", "", "SyntaxError", NULL);
        deep_fails(pres[i], 201, "1", "", "SyntaxError", NULL);
    }
    /* 199 brackets are fine, as in CPython (it refuses 200) */
    deep_ok("(", 199, "1", ")", NULL);
    deep_ok("[", 199, "1", "]", NULL);
    deep_ok("f(", 199, "1", ")", NULL);
    deep_ok("-", 150, "1", "", NULL);
    deep_ok("not ", 150, "1", "", NULL);
    deep_fails("(", 200, "1", ")", "SyntaxError", NULL);
    /* the limit is configurable */
    code_parse_opts o = {.max_nesting = 20};
    deep_ok("(", 19, "1", ")", &o);
    deep_fails("(", 20, "1", ")", "SyntaxError", &o);
    o.max_nesting = 400;
    o.max_c_stack = 4 << 20;     /* sanitizers' frames are large */
    deep_ok("(", 399, "1", ")", &o);
    deep_fails("(", 400, "1", ")", "SyntaxError", &o);
    o.max_c_stack = 0;
    /* blocks: 99 levels of indentation parse, the 100th is refused on its own
     * line, as in CPython (its MAXINDENT of 100 counts the outermost level) */
    char *s = malloc(100000);
    size_t k = 0;
    parsed r;
    for (int n = 99; n <= 101; n++) {
        k = 0;
        for (int i = 0; i < n; i++) {
            memset(s + k, ' ', (size_t)i);
            k += (size_t)i;
            memcpy(s + k, "if x:\n", 6);
            k += 6;
        }
        memset(s + k, ' ', (size_t)n);
        k += (size_t)n;
        memcpy(s + k, "pass\n", 6);
        parse_opts(&r, s, strlen(s), NULL);
        if (n == 99) {
            assert_int_equal(r.rc, 0);
        } else {
            assert_int_equal(r.rc, -1);
            assert_string_equal(r.err.type, "IndentationError");
            assert_string_equal(r.err.msg, "too many levels of indentation");
            assert_int_equal(r.err.line, 101);
        }
        done(&r);
    }
    /* blocks on one line each count as nesting too */
    o.max_nesting = 10;
    k = 0;
    for (int i = 0; i < 12; i++) {
        memset(s + k, ' ', (size_t)i);
        k += (size_t)i;
        memcpy(s + k, "if x:\n", 6);
        k += 6;
    }
    memset(s + k, ' ', 12);
    memcpy(s + k + 12, "pass\n", 6);
    parse_opts(&r, s, strlen(s), &o);
    assert_int_equal(r.rc, -1);
    assert_string_equal(r.err.type, "SyntaxError");
    assert_non_null(strstr(r.err.msg, "too deeply nested"));
    done(&r);
    free(s);
}

static void test_height_limits(void **state)
{
    /* left-associative chains are loops in the parser but deep trees: bounded */
    const char *const chains[] = {"a + ", "a * ", "a | ", "a << ", "a.", "f()", "a[0]"};
    for (size_t i = 0; i < sizeof(chains) / sizeof(chains[0]); i++) {
        const char *mid = chains[i][strlen(chains[i]) - 1] == ' ' || chains[i][1] == '.'
                          ? "a" : "";
        deep_fails(chains[i], 100000, mid, "", "SyntaxError", NULL);
    }
    deep_ok("a + ", 900, "a", "", NULL);
    code_parse_opts o = {.max_height = 50};
    deep_fails("a + ", 60, "a", "", "SyntaxError", &o);
    deep_ok("a + ", 40, "a", "", &o);
    /* n-ary forms are flat: long and/or chains, comparisons, elif chains, statements */
    deep_ok("a or ", 100000, "a", "", NULL);
    deep_ok("a and ", 100000, "a", "", NULL);
    deep_ok("a < ", 100000, "a", "", NULL);
    deep_ok("x = ", 100000, "1", "", NULL);
    deep_ok("'a' ", 100000, "", "", NULL);
    deep_ok("1, ", 100000, "1", "", NULL);
    char *s = repeat("if x: pass\nelif y: pass\n", 1, "", "");
    free(s);
    s = malloc(30 * 20000 + 20);
    strcpy(s, "if x: pass\n");
    for (int i = 0; i < 20000; i++)
        strcat(s + strlen(s) - 12 > s ? s + strlen(s) - 12 : s, "elif y: pass\n");
    parsed r;
    parse_opts(&r, s, strlen(s), NULL);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.mod->body.n, 1);
    assert_int_equal(r.mod->body.v[0]->u.if_.n, 20001);
    done(&r);
    free(s);
}

static void test_c_stack_guard(void **state)
{
    /* with the nesting limits lifted, the C-stack guard still stops the recursion */
    code_parse_opts o = {.max_nesting = 10000000, .max_height = 100000000};
    deep_fails("(", 1000000, "1", ")", "RecursionError", &o);
    deep_fails("-", 1000000, "1", "", "RecursionError", &o);
    deep_fails("not ", 1000000, "1", "", "RecursionError", &o);
    deep_fails("lambda: ", 1000000, "1", "", "RecursionError", &o);
    o.max_c_stack = 16 * 1024;
    deep_fails("[", 1000, "1", "]", "RecursionError", &o);
    parsed r;
    const char *msg = "x = [[[[1]]]]";
    parse_opts(&r, msg, strlen(msg), &o);
    assert_int_equal(r.rc, 0);
    done(&r);
}

/* An allocator that refuses after a number of allocations. */
typedef struct failer {
    long left;
} failer;

static void *failing_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    failer *f = ud;
    if (nsize == 0) {
        free(ptr);
        return NULL;
    }
    if (f->left-- <= 0)
        return NULL;
    return realloc(ptr, nsize);
}

static void test_memory_limits(void **state)
{
    const char *src =
        "import json\n"
        "def f(a, *b, c=1, **d):\n"
        "    return [x * 2 for x in a if x], {k: v for k, v in d.items()}\n"
        "try:\n"
        "    y = f'{a!r:>{w}} and {b=}' + 'x' 'y'\n"
        "except (ValueError, KeyError) as e:\n"
        "    raise RuntimeError('no') from e\n"
        "result = f([1, 2, 3], c=2, z=[{1, 2}, (3,)])\n";
    /* a byte limit: MemoryError, never a crash, and nothing left allocated */
    for (size_t limit = 0; limit < 40000; limit += 512) {
        code_mem m;
        code_mem_init(&m, NULL, NULL, limit ? limit : 1, 0);
        code_arena a;
        code_arena_init(&a, &m);
        code_error err = {0};
        code_module *mod;
        int rc = code_parse(src, strlen(src), NULL, &a, &mod, &err);
        if (rc)
            assert_string_equal(err.type, "MemoryError");
        code_arena_free(&a);
        assert_int_equal(m.bytes, 0);
    }
    /* an allocator that refuses the n-th allocation, for every n */
    bool succeeded = false;
    for (long n = 0; n < 200 && !succeeded; n++) {
        failer f = {n};
        code_mem m;
        code_mem_init(&m, failing_alloc, &f, 0, 0);
        code_arena a;
        code_arena_init(&a, &m);
        code_error err = {0};
        code_module *mod;
        int rc = code_parse(src, strlen(src), NULL, &a, &mod, &err);
        if (rc)
            assert_string_equal(err.type, "MemoryError");
        else
            succeeded = true;
        code_arena_free(&a);
        assert_int_equal(m.bytes, 0);
    }
    assert_true(succeeded);
    /* an allocation-count limit */
    code_mem m;
    code_mem_init(&m, NULL, NULL, 0, 1);
    code_arena a;
    code_arena_init(&a, &m);
    code_error err = {0};
    code_module *mod;
    char *big = repeat("x = 1\n", 5000, "", "");
    assert_int_equal(code_parse(big, strlen(big), NULL, &a, &mod, &err), -1);
    assert_string_equal(err.type, "MemoryError");
    assert_true(m.failed);
    code_arena_free(&a);
    free(big);
}

static void test_huge_literals(void **state)
{
    /* a million-digit integer is kept as text for the bignum layer */
    size_t n = 1000000;
    char *s = malloc(n + 8);
    s[0] = '9';
    memset(s + 1, '0', n - 1);
    s[n] = '\0';
    parsed r;
    parse_opts(&r, s, n, NULL);
    assert_int_equal(r.rc, 0);
    const code_expr *e = r.mod->body.v[0]->u.expr.value;
    assert_int_equal(e->kind, CODE_E_INT);
    assert_int_equal(e->base, 10);
    assert_int_equal(e->u.str.len, n);
    done(&r);
    /* a megabyte string, and 10**10**10 parses (its value is the VM's problem) */
    s[0] = '\'';
    memset(s + 1, 'a', n);
    s[n + 1] = '\'';
    s[n + 2] = '\0';
    parse_opts(&r, s, n + 2, NULL);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.mod->body.v[0]->u.expr.value->u.str.len, n);
    done(&r);
    free(s);
    OK("10**10**10", "(expr (** 10 (** 10 10)))");
    OK("0x" "ffffffffffffffffffffffffffffffffffffffff",
       "(expr 0xffffffffffffffffffffffffffffffffffffffff)");
    /* a source of only a huge number of statements */
    char *many = repeat("x = [1, 'a', {2: 3}]\n", 20000, "", "");
    parse_opts(&r, many, strlen(many), NULL);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.mod->body.n, 20000);
    done(&r);
    free(many);
}

static void test_positions_and_dump(void **state)
{
    parsed r;
    const char *src = "x = 1\nif y:\n    z = f(a,\n          b)\n";
    parse_opts(&r, src, strlen(src), NULL);
    assert_int_equal(r.rc, 0);
    const code_stmt *s = r.mod->body.v[1];
    assert_int_equal(s->line, 2);
    const code_stmt *z = s->u.if_.bodies[0].v[0];
    assert_int_equal(z->line, 3);
    assert_int_equal(z->col, 5);
    const code_expr *call = z->u.assign.value;
    assert_int_equal(call->kind, CODE_E_CALL);
    assert_int_equal(call->u.call.args[1]->line, 4);
    assert_int_equal(call->u.call.args[1]->col, 11);
    assert_int_equal(call->height, 2);
    /* the dump truncates like snprintf */
    char small[8];
    size_t need = code_ast_dump(r.mod, small, sizeof(small));
    assert_true(need > sizeof(small));
    assert_int_equal(strlen(small), sizeof(small) - 1);
    assert_int_equal(code_ast_dump(r.mod, NULL, 0), need);
    done(&r);
    /* names longer than any internal buffer are written whole */
    char *longname = repeat("v", 300, "", "");
    char *src2 = malloc(700);
    snprintf(src2, 700, "import %s as %s", longname, longname);
    parse_opts(&r, src2, strlen(src2), NULL);
    assert_int_equal(r.rc, 0);
    assert_int_equal(code_ast_dump(r.mod, dump, sizeof(dump)), strlen(src2) + 2);
    done(&r);
    free(src2);
    free(longname);
    /* error formatting */
    code_error e = {0};
    code_error_set(&e, "SyntaxError", 3, 1, "invalid %s", "syntax");
    code_error_set(&e, "TypeError", 4, 1, "second");   /* the first error wins */
    char b[100];
    code_error_format(&e, b, sizeof(b));
    assert_string_equal(b, "SyntaxError: invalid syntax (line 3)");
    err_at("x = 1\ny\0", 8, "SyntaxError", 2, "source code cannot contain null bytes", __LINE__);
    /* a source need not be NUL-terminated */
    const char buf[] = {'x', '=', '1', '+', '2', '!'};
    parse_opts(&r, buf, 5, NULL);
    assert_int_equal(r.rc, 0);
    code_ast_dump(r.mod, dump, sizeof(dump));
    assert_string_equal(dump, "(= x (+ 1 2))");
    done(&r);
}

static void test_options(void **state)
{
    /* top-level await, for hosts that want it (CPython refuses it) */
    code_parse_opts o = {.top_level_await = true};
    parsed r;
    const char *src = "x = await f()\nawait asyncio.gather(a(), b())";
    parse_opts(&r, src, strlen(src), &o);
    assert_int_equal(r.rc, 0);
    code_ast_dump(r.mod, dump, sizeof(dump));
    assert_string_equal(dump, "(= x (await (call f)))\n(expr (await (call (. asyncio gather) "
                              "(call a) (call b))))");
    done(&r);
    parse_opts(&r, src, strlen(src), NULL);
    assert_int_equal(r.rc, -1);
    assert_string_equal(r.err.msg, "'await' outside function");
    done(&r);
    /* still refused in a plain function */
    src = "def f():\n    await g()";
    parse_opts(&r, src, strlen(src), &o);
    assert_int_equal(r.rc, -1);
    assert_string_equal(r.err.msg, "'await' outside async function");
    done(&r);
}

/* The library keeps no global state: threads parse at once, each with its own
 * memory, and get the same trees. */
typedef struct job {
    const char *src;
    char *out;
    int rc;
} job;

static void *parse_thread(void *arg)
{
    job *j = arg;
    for (int i = 0; i < 50 && j->rc == 0; i++) {
        code_mem m;
        code_mem_init(&m, NULL, NULL, 64u << 20, 0);
        code_arena a;
        code_arena_init(&a, &m);
        code_error err = {0};
        code_module *mod;
        j->rc = code_parse(j->src, strlen(j->src), NULL, &a, &mod, &err);
        if (j->rc == 0)
            code_ast_dump(mod, j->out, 1 << 16);
        code_arena_free(&a);
    }
    return NULL;
}

static void test_threads(void **state)
{
    const char *src =
        "def f(a, *b, c=1, **d):\n"
        "    return [x * 2 for x in a if x], {k: v for k, v in d.items()}\n"
        "y = f'{a!r:>{w}} and {b=}' + 'x' 'y'\n"
        "try:\n    z = f([1, 2], c=2)\nexcept (ValueError, KeyError) as e:\n    raise\n";
    enum { N = 4 };
    pthread_t th[N];
    job jobs[N];
    for (int i = 0; i < N; i++) {
        jobs[i] = (job){src, malloc(1 << 16), 0};
        assert_int_equal(pthread_create(&th[i], NULL, parse_thread, &jobs[i]), 0);
    }
    for (int i = 0; i < N; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(jobs[i].rc, 0);
        assert_string_equal(jobs[i].out, jobs[0].out);
    }
    for (int i = 0; i < N; i++)
        free(jobs[i].out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tokens_lines),     cmocka_unit_test(test_tokens_operators),
        cmocka_unit_test(test_tokens_numbers),   cmocka_unit_test(test_tokens_strings),
        cmocka_unit_test(test_fstrings),         cmocka_unit_test(test_precedence),
        cmocka_unit_test(test_atoms_and_displays), cmocka_unit_test(test_statements),
        cmocka_unit_test(test_syntax_errors),    cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_depth_limits),     cmocka_unit_test(test_height_limits),
        cmocka_unit_test(test_c_stack_guard),    cmocka_unit_test(test_memory_limits),
        cmocka_unit_test(test_huge_literals),    cmocka_unit_test(test_positions_and_dump),
        cmocka_unit_test(test_options),          cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
