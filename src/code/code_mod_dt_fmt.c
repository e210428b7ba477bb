/* datetime's text forms: isoformat and fromisoformat, strftime, and
 * strptime (built, as CPython's _strptime, as one regular expression per
 * format, here run by PCRE2).
 *
 * strftime is a fixed C-locale English implementation (no libc locale): %a
 * %A %b %B %c %d %e %f %H %I %j %m %M %p %S %U %w %W %x %X %y %Y %G %u %V %z
 * %Z %D %F %T %R %h %n %t %%; any other directive is copied as it is, as
 * glibc does. */
#include <stdlib.h>
#include <string.h>

#include "code/code_dt.h"
#include "code/code_re.h"

void code_dt_fmt_offset(code_sb *b, int64_t off_us, const char *sep)
{
    char sign = off_us < 0 ? '-' : '+';
    int64_t a = off_us < 0 ? -off_us : off_us;
    int64_t secs = a / US_PER_SEC, us = a % US_PER_SEC;
    code_sb_printf(b, "%c%02d%s%02d", sign, (int)(secs / 3600), sep, (int)(secs / 60 % 60));
    if (secs % 60 || us)
        code_sb_printf(b, "%s%02d", sep, (int)(secs % 60));
    if (us)
        code_sb_printf(b, ".%06d", (int)us);
}

cv code_dt_isoformat(code_vm *vm, const dt_obj *o, const code_type *t, char sep, const char *timespec)
{
    code_sb b;
    code_sb_init(&b, vm);
    if (t != &code_type_dt_time)
        code_sb_printf(&b, "%04d-%02d-%02d", o->year, o->month, o->day);
    if (t == &code_type_dt_date)
        return code_sb_finish(&b);
    if (t == &code_type_dt_datetime)
        code_sb_add(&b, &sep, 1);
    if (!strcmp(timespec, "auto"))
        timespec = o->us ? "microseconds" : "seconds";
    if (!strcmp(timespec, "hours"))
        code_sb_printf(&b, "%02d", o->hour);
    else if (!strcmp(timespec, "minutes"))
        code_sb_printf(&b, "%02d:%02d", o->hour, o->minute);
    else if (!strcmp(timespec, "seconds"))
        code_sb_printf(&b, "%02d:%02d:%02d", o->hour, o->minute, o->second);
    else if (!strcmp(timespec, "milliseconds"))
        code_sb_printf(&b, "%02d:%02d:%02d.%03d", o->hour, o->minute, o->second, o->us / 1000);
    else if (!strcmp(timespec, "microseconds"))
        code_sb_printf(&b, "%02d:%02d:%02d.%06d", o->hour, o->minute, o->second, o->us);
    else {
        code_sb_free(&b);
        return code_raise(vm, &code_exc_ValueError, "Unknown timespec value");
    }
    if (o->tz)
        code_dt_fmt_offset(&b, code_dt_offset(o), ":");
    return code_sb_finish(&b);
}

/* ---- strftime ---------------------------------------------------------------------- */

static int fmt_one(code_sb *b, const dt_obj *o, char c, code_vm *vm)
{
    int wd = code_dt_weekday(o->year, o->month, o->day);                 /* Monday 0 */
    int yday = (int)(code_dt_ymd_to_ord(o->year, o->month, o->day) - code_dt_ymd_to_ord(o->year, 1, 1));
    int h12 = o->hour % 12 ? o->hour % 12 : 12;
    int iy, iw, iwd;
    switch (c) {
    case 'a': code_sb_printf(b, "%.3s", code_dt_day_names[wd]); break;
    case 'A': code_sb_addc(b, code_dt_day_names[wd]); break;
    case 'b': case 'h': code_sb_printf(b, "%.3s", code_dt_month_names[o->month]); break;
    case 'B': code_sb_addc(b, code_dt_month_names[o->month]); break;
    case 'c':
        code_sb_printf(b, "%.3s %.3s %2d %02d:%02d:%02d %d", code_dt_day_names[wd],
                       code_dt_month_names[o->month], o->day, o->hour, o->minute, o->second, o->year);
        break;
    case 'd': code_sb_printf(b, "%02d", o->day); break;
    case 'e': code_sb_printf(b, "%2d", o->day); break;
    case 'f': code_sb_printf(b, "%06d", o->us); break;
    case 'H': code_sb_printf(b, "%02d", o->hour); break;
    case 'I': code_sb_printf(b, "%02d", h12); break;
    case 'j': code_sb_printf(b, "%03d", yday + 1); break;
    case 'm': code_sb_printf(b, "%02d", o->month); break;
    case 'M': code_sb_printf(b, "%02d", o->minute); break;
    case 'p': code_sb_addc(b, o->hour < 12 ? "AM" : "PM"); break;
    case 'S': code_sb_printf(b, "%02d", o->second); break;
    case 'U': code_sb_printf(b, "%02d", (yday + 7 - (wd + 1) % 7) / 7); break;
    case 'W': code_sb_printf(b, "%02d", (yday + 7 - wd) / 7); break;
    case 'w': code_sb_printf(b, "%d", (wd + 1) % 7); break;
    case 'u': code_sb_printf(b, "%d", wd + 1); break;
    case 'x': code_sb_printf(b, "%02d/%02d/%02d", o->month, o->day, o->year % 100); break;
    case 'D': code_sb_printf(b, "%02d/%02d/%02d", o->month, o->day, o->year % 100); break;
    case 'X': case 'T': code_sb_printf(b, "%02d:%02d:%02d", o->hour, o->minute, o->second); break;
    case 'R': code_sb_printf(b, "%02d:%02d", o->hour, o->minute); break;
    case 'F': code_sb_printf(b, "%d-%02d-%02d", o->year, o->month, o->day); break;
    case 'y': code_sb_printf(b, "%02d", o->year % 100); break;
    case 'Y': code_sb_printf(b, "%d", o->year); break;
    case 'C': code_sb_printf(b, "%02d", o->year / 100); break;
    case 'G': code_dt_iso_calendar(o->year, o->month, o->day, &iy, &iw, &iwd); code_sb_printf(b, "%d", iy); break;
    case 'V': code_dt_iso_calendar(o->year, o->month, o->day, &iy, &iw, &iwd); code_sb_printf(b, "%02d", iw); break;
    case 'z':
        if (o->tz)
            code_dt_fmt_offset(b, code_dt_offset(o), "");
        break;
    case 'Z':
        if (o->tz) {
            cv n = code_dt_tz_name(vm, o->tz);
            if (!n)
                return -1;
            code_sb_add(b, code_str_cstr(n), code_str_len(n));
            code_decref(vm, n);
        }
        break;
    case 'n': code_sb_add(b, "\n", 1); break;
    case 't': code_sb_add(b, "\t", 1); break;
    case '%': code_sb_add(b, "%", 1); break;
    default: code_sb_add(b, "%", 1); code_sb_add(b, &c, 1); break;
    }
    return 0;
}

cv code_dt_strftime(code_vm *vm, cv self, cv fmt)
{
    const dt_obj *o = dt_of(self);
    const char *f = code_str_cstr(fmt);
    size_t n = code_str_len(fmt);
    code_sb b;
    code_sb_init(&b, vm);
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        if (f[i] != '%' || i + 1 >= n)
            continue;
        code_sb_add(&b, f + run, i - run);
        /* glibc's "%-d": the number without its padding */
        bool unpad = f[i + 1] == '-' && i + 2 < n && strchr("dmHIMSjyUWVeC", f[i + 2]) && f[i + 2];
        size_t at = b.len;
        if (fmt_one(&b, o, f[i + 1 + unpad], vm) < 0) {
            code_sb_free(&b);
            return CV_NULL;
        }
        if (unpad && !b.failed) {
            size_t k = at;
            while (k + 1 < b.len && (b.p[k] == '0' || b.p[k] == ' '))
                k++;
            memmove(b.p + at, b.p + k, b.len - k);
            b.len -= k - at;
        }
        i += 1 + unpad;
        run = i + 1;
    }
    code_sb_add(&b, f + run, n - run);
    return code_sb_finish(&b);
}

/* ---- strptime -------------------------------------------------------------------------- */

static void add_names(code_sb *b, const char *group, const char *const *names, size_t n,
                      bool abbr)
{
    code_sb_printf(b, "(?P<%s>", group);
    for (size_t i = 0; i < n; i++)
        code_sb_printf(b, "%s%.*s", i ? "|" : "", abbr ? 3 : (int)strlen(names[i]), names[i]);
    code_sb_addc(b, ")");
}

/* The regular expression of a format, as CPython's TimeRE.pattern; 0, or -1
 * with ValueError for a bad directive. */
static int strptime_regex(code_vm *vm, const char *f, size_t n, cv fmt, code_sb *b)
{
    for (size_t i = 0; i < n; i++) {
        char c = f[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
            while (i + 1 < n && strchr(" \t\n\r\f\v", f[i + 1]) && f[i + 1])
                i++;
            code_sb_addc(b, "\\s+");
            continue;
        }
        if (c != '%') {
            if (strchr("\\.^$*+?{}[]|()", c) && c)
                code_sb_add(b, "\\", 1);
            code_sb_add(b, &c, 1);
            continue;
        }
        if (i + 1 >= n)
            return code_raise_i(vm, &code_exc_ValueError, "stray %% in format '%s'",
                                code_str_cstr(fmt));
        char d = f[++i];
        switch (d) {
        case 'd': code_sb_addc(b, "(?P<d>3[0-1]|[1-2]\\d|0[1-9]|[1-9]| [1-9])"); break;
        case 'f': code_sb_addc(b, "(?P<f>[0-9]{1,6})"); break;
        case 'H': code_sb_addc(b, "(?P<H>2[0-3]|[0-1]\\d|\\d)"); break;
        case 'I': code_sb_addc(b, "(?P<I>1[0-2]|0[1-9]|[1-9])"); break;
        case 'G': code_sb_addc(b, "(?P<G>\\d\\d\\d\\d)"); break;
        case 'j':
            code_sb_addc(b, "(?P<j>36[0-6]|3[0-5]\\d|[1-2]\\d\\d|0[1-9]\\d|00[1-9]|[1-9]\\d|0[1-9]|[1-9])");
            break;
        case 'm': code_sb_addc(b, "(?P<m>1[0-2]|0[1-9]|[1-9])"); break;
        case 'M': code_sb_addc(b, "(?P<M>[0-5]\\d|\\d)"); break;
        case 'S': code_sb_addc(b, "(?P<S>6[0-1]|[0-5]\\d|\\d)"); break;
        case 'U': code_sb_addc(b, "(?P<U>5[0-3]|[0-4]\\d|\\d)"); break;
        case 'W': code_sb_addc(b, "(?P<W>5[0-3]|[0-4]\\d|\\d)"); break;
        case 'w': code_sb_addc(b, "(?P<w>[0-6])"); break;
        case 'u': code_sb_addc(b, "(?P<u>[1-7])"); break;
        case 'V': code_sb_addc(b, "(?P<V>5[0-3]|0[1-9]|[1-4]\\d|\\d)"); break;
        case 'y': code_sb_addc(b, "(?P<y>\\d\\d)"); break;
        case 'Y': code_sb_addc(b, "(?P<Y>\\d\\d\\d\\d)"); break;
        case 'z':
            code_sb_addc(b, "(?P<z>[+-]\\d\\d:?[0-5]\\d(:?[0-5]\\d(\\.\\d{1,6})?)?|(?-i:Z))");
            break;
        case 'A': add_names(b, "A", code_dt_day_names, 7, false); break;
        case 'a': add_names(b, "a", code_dt_day_names, 7, true); break;
        case 'B': add_names(b, "B", code_dt_month_names + 1, 12, false); break;
        case 'b': add_names(b, "b", code_dt_month_names + 1, 12, true); break;
        case 'p': code_sb_addc(b, "(?P<p>am|pm)"); break;
        case 'Z': code_sb_addc(b, "(?P<Z>utc|gmt)"); break;
        case 'c':
            if (strptime_regex(vm, "%a %b %d %H:%M:%S %Y", 20, fmt, b) < 0)
                return -1;
            break;
        case 'x':
            if (strptime_regex(vm, "%m/%d/%y", 8, fmt, b) < 0)
                return -1;
            break;
        case 'X':
            if (strptime_regex(vm, "%H:%M:%S", 8, fmt, b) < 0)
                return -1;
            break;
        case '%': code_sb_addc(b, "%"); break;
        default:
            return code_raise_i(vm, &code_exc_ValueError, "'%c' is a bad directive in format '%s'",
                                d, code_str_cstr(fmt));
        }
    }
    return 0;
}

/* A named group's text, or NULL when it did not take part. */
static const char *grp(pcre2_code *code, pcre2_match_data *md, const char *s, const char *name,
                       size_t *len)
{
    int g = pcre2_substring_number_from_name(code, (PCRE2_SPTR)name);
    if (g < 0)
        return NULL;
    const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
    if (ov[2 * g] == PCRE2_UNSET)
        return NULL;
    *len = ov[2 * g + 1] - ov[2 * g];
    return s + ov[2 * g];
}

static int grp_int(pcre2_code *code, pcre2_match_data *md, const char *s, const char *name,
                   int *out)
{
    size_t len;
    const char *p = grp(code, md, s, name, &len);
    if (!p)
        return 0;
    int v = 0;
    for (size_t i = 0; i < len; i++)
        if (p[i] >= '0' && p[i] <= '9')
            v = v * 10 + (p[i] - '0');
    *out = v;
    return 1;
}

static int name_index(const char *p, size_t len, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strncasecmp(p, names[i], len) == 0 && (len == 3 || strlen(names[i]) == len))
            return (int)i;
    return -1;
}

/* The fields of a match, as CPython's _strptime, into a datetime. */
static cv strptime_result(code_vm *vm, pcre2_code *code, pcre2_match_data *md, const char *s)
{
    int year = 1900, month = 1, day = 1, hour = 0, minute = 0, second = 0, us = 0, v;
    int julian = -1, weekday = -1, week = -1, iso_year = -1, iso_week = -1;
    bool week_mon = false;
    size_t len;
    const char *p;
    if (grp_int(code, md, s, "y", &v))
        year = v + (v <= 68 ? 2000 : 1900);
    grp_int(code, md, s, "Y", &year);
    grp_int(code, md, s, "G", &iso_year);
    grp_int(code, md, s, "m", &month);
    if ((p = grp(code, md, s, "B", &len)) || (p = grp(code, md, s, "b", &len)))
        month = name_index(p, len, code_dt_month_names + 1, 12) + 1;
    grp_int(code, md, s, "d", &day);
    grp_int(code, md, s, "H", &hour);
    if (grp_int(code, md, s, "I", &v)) {
        hour = v;
        if ((p = grp(code, md, s, "p", &len))) {
            bool pm = p[0] == 'p' || p[0] == 'P';
            hour = pm ? (v == 12 ? 12 : v + 12) : (v == 12 ? 0 : v);
        }
    }
    grp_int(code, md, s, "M", &minute);
    grp_int(code, md, s, "S", &second);
    if ((p = grp(code, md, s, "f", &len))) {
        grp_int(code, md, s, "f", &us);
        for (size_t i = len; i < 6; i++)
            us *= 10;
    }
    if ((p = grp(code, md, s, "A", &len)) || (p = grp(code, md, s, "a", &len)))
        weekday = name_index(p, len, code_dt_day_names, 7);
    if (grp_int(code, md, s, "w", &v))
        weekday = v == 0 ? 6 : v - 1;
    if (grp_int(code, md, s, "u", &v))
        weekday = v - 1;
    if (grp_int(code, md, s, "U", &week))
        week_mon = false;
    else if (grp_int(code, md, s, "W", &week))
        week_mon = true;
    grp_int(code, md, s, "V", &iso_week);
    grp_int(code, md, s, "j", &julian);
    cv tz = CV_NULL;
    if ((p = grp(code, md, s, "z", &len))) {
        int64_t off = 0;
        if (!(len == 1 && (p[0] == 'Z' || p[0] == 'z'))) {
            char digits[16];
            size_t nd = 0, frac_start = 0;
            int64_t frac = 0;
            for (size_t i = 1; i < len; i++) {
                if (p[i] == '.') {
                    frac_start = i + 1;
                    break;
                }
                if (p[i] != ':' && nd < sizeof digits)
                    digits[nd++] = p[i];
            }
            int hh = (digits[0] - '0') * 10 + (digits[1] - '0');
            int mm = (digits[2] - '0') * 10 + (digits[3] - '0');
            int ss = nd >= 6 ? (digits[4] - '0') * 10 + (digits[5] - '0') : 0;
            if (frac_start) {
                size_t k = 0;
                for (size_t i = frac_start; i < len; i++, k++)
                    frac = frac * 10 + (p[i] - '0');
                for (; k < 6; k++)
                    frac *= 10;
            }
            off = ((int64_t)hh * 3600 + mm * 60 + ss) * US_PER_SEC + frac;
            if (p[0] == '-')
                off = -off;
        }
        cv name = CV_NULL;
        if ((p = grp(code, md, s, "Z", &len)) && !(name = code_str_new(vm, p, len)))
            return CV_NULL;
        tz = code_dt_tz_new(vm, off, name);
        code_decref(vm, name);
        if (!tz)
            return CV_NULL;
    }
    if (julian < 0 && weekday >= 0) {
        if (week >= 0) {
            int first = code_dt_weekday(year, 1, 1), dow = weekday;
            if (!week_mon) {
                first = (first + 1) % 7;
                dow = (dow + 1) % 7;
            }
            int week0 = (7 - first) % 7;
            julian = week == 0 ? 1 + dow - first : 1 + week0 + 7 * (week - 1) + dow;
        } else if (iso_year >= 0 && iso_week >= 0) {
            int correction = code_dt_weekday(iso_year, 1, 4) + 1 + 3;
            int64_t ord = (int64_t)iso_week * 7 + weekday + 1 - correction;
            if (ord < 1) {
                ord += code_dt_ymd_to_ord(iso_year, 1, 1);
                iso_year--;
                ord -= code_dt_ymd_to_ord(iso_year, 1, 1);
            }
            year = iso_year;
            julian = (int)ord;
        }
    }
    if (julian >= 0) {
        int64_t ord = julian - 1 + code_dt_ymd_to_ord(year, 1, 1);
        if (ord < 1 || ord > DT_MAXORDINAL) {
            code_decref(vm, tz);
            return code_raise(vm, &code_exc_ValueError, "year is out of range");
        }
        code_dt_ord_to_ymd(ord, &year, &month, &day);
    }
    cv r = code_dt_new(vm, &code_type_dt_datetime, year, month, day, hour, minute, second, us, tz);
    code_decref(vm, tz);
    return r;
}

cv code_dt_strptime(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    cv data, fmt;
    if (code_args_nokw(vm, "strptime", nargs, kwnames, 2, 2) < 0)
        return CV_NULL;
    data = args[0];
    fmt = args[1];
    if (!cv_is(data, &code_type_str) || !cv_is(fmt, &code_type_str))
        return code_raise(vm, &code_exc_TypeError, "strptime() argument %d must be str, not %s",
                          cv_is(data, &code_type_str) ? 2 : 1,
                          code_type_name(cv_is(data, &code_type_str) ? fmt : data));
    code_sb re;
    code_sb_init(&re, vm);
    if (strptime_regex(vm, code_str_cstr(fmt), code_str_len(fmt), fmt, &re) < 0 || re.failed) {
        code_sb_free(&re);
        return vm->exc ? CV_NULL : code_raise_nomem(vm);
    }
    re_ctx x;
    if (code_re_ctx_open(vm, NULL, &x) < 0) {
        code_sb_free(&re);
        return CV_NULL;
    }
    pcre2_compile_context *cc = pcre2_compile_context_create(x.g);
    int err = 0;
    PCRE2_SIZE erroff;
    pcre2_code *code = cc ? pcre2_compile((PCRE2_SPTR)(re.p ? re.p : ""), re.len,
                                          PCRE2_UTF | PCRE2_UCP | PCRE2_CASELESS | PCRE2_ANCHORED,
                                          &err, &erroff, cc)
                          : NULL;
    pcre2_compile_context_free(cc);
    code_sb_free(&re);
    cv r = CV_NULL;
    if (!code) {
        if (!vm->exc)
            code_raise(vm, &code_exc_ValueError, "invalid strptime format '%s'",
                       code_str_cstr(fmt));
        code_re_ctx_close(&x);
        return CV_NULL;
    }
    x.md = pcre2_match_data_create_from_pattern(code, x.g);
    if (!x.md) {
        pcre2_code_free(code);
        code_re_ctx_close(&x);
        return vm->exc ? CV_NULL : code_raise_nomem(vm);
    }
    const char *s = code_str_cstr(data);
    size_t n = code_str_len(data);
    int rc = pcre2_match(code, (PCRE2_SPTR)s, n, 0, 0, x.md, x.m);
    if (rc == PCRE2_ERROR_NOMATCH) {
        cv dr = code_repr(vm, data), fr = dr ? code_repr(vm, fmt) : CV_NULL;
        if (fr)
            code_raise(vm, &code_exc_ValueError, "time data %s does not match format %s",
                       code_str_cstr(dr), code_str_cstr(fr));
        code_decref(vm, dr);
        code_decref(vm, fr);
    } else if (rc < 0) {
        if (!vm->exc)
            code_raise(vm, &code_exc_RuntimeError, "regular expression too costly");
    } else {
        size_t end = pcre2_get_ovector_pointer(x.md)[1];
        if (end != n)
            code_raise(vm, &code_exc_ValueError, "unconverted data remains: %s", s + end);
        else
            r = strptime_result(vm, code, x.md, s);
    }
    pcre2_code_free(code);
    code_re_ctx_close(&x);
    return r;
}

/* ---- fromisoformat ------------------------------------------------------------------------- */

static bool digits(const char *s, size_t n, int *out)
{
    int v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
}

/* HH[:MM[:SS[.fff...]]] (or without colons); the length taken, or 0. */
static size_t parse_time(const char *s, size_t n, int *h, int *m, int *sec, int *us)
{
    *h = *m = *sec = *us = 0;
    if (n < 2 || !digits(s, 2, h))
        return 0;
    size_t i = 2;
    bool colon = n > 2 && s[2] == ':';
    int *parts[2] = { m, sec }, got = 0;
    for (int k = 0; k < 2; k++) {
        size_t j = i;
        if (colon) {
            if (j >= n || s[j] != ':')
                break;
            j++;
        }
        if (j + 2 > n || !digits(s + j, 2, parts[k])) {
            if (colon)
                return 0;
            break;
        }
        i = j + 2;
        got++;
    }
    if (got == 2 && i < n && (s[i] == '.' || s[i] == ',')) {
        size_t j = i + 1, k = 0;
        int v = 0;
        while (j < n && s[j] >= '0' && s[j] <= '9') {
            if (k < 6)
                v = v * 10 + (s[j] - '0');
            j++;
            k++;
        }
        if (k == 0)
            return 0;
        for (; k < 6; k++)
            v *= 10;
        *us = v;
        i = j;
    }
    return i;
}

/* Z or +HH[:MM[:SS[.ffffff]]]; -1 if malformed. */
static int parse_tz(const char *s, size_t n, int64_t *off)
{
    if (n == 1 && s[0] == 'Z') {
        *off = 0;
        return 0;
    }
    if (n < 3 || (s[0] != '+' && s[0] != '-'))
        return -1;
    int h, m, sec, us;
    if (parse_time(s + 1, n - 1, &h, &m, &sec, &us) != n - 1)
        return -1;
    *off = ((int64_t)h * 3600 + m * 60 + sec) * US_PER_SEC + us;
    if (s[0] == '-')
        *off = -*off;
    return *off <= -US_PER_DAY || *off >= US_PER_DAY ? -1 : 0;
}

static size_t parse_date(const char *s, size_t n, int *y, int *m, int *d)
{
    if (n >= 10 && s[4] == '-' && s[7] == '-' && digits(s, 4, y) && digits(s + 5, 2, m) &&
        digits(s + 8, 2, d))
        return 10;
    if (n >= 8 && digits(s, 4, y) && digits(s + 4, 2, m) && digits(s + 6, 2, d))
        return 8;
    return 0;
}

cv code_dt_fromisoformat(code_vm *vm, const code_type *t, cv str)
{
    const char *s = code_str_cstr(str);
    size_t n = code_str_len(str), i = 0;
    int y = 1900, mo = 1, d = 1, h = 0, mi = 0, sec = 0, us = 0;
    int64_t off = 0;
    bool aware = false, ok = true;
    if (t != &code_type_dt_time) {
        i = parse_date(s, n, &y, &mo, &d);
        ok = i > 0 && (t == &code_type_dt_datetime || i == n);
        if (ok && i < n)
            i++;                 /* the separator, any character */
        ok = ok && !(i == n && i > 0 && (s[i - 1] & 0x80));
    } else if (n > 0 && s[0] == 'T') {
        i = 1;
    }
    if (ok && i < n) {
        size_t k = parse_time(s + i, n - i, &h, &mi, &sec, &us);
        ok = k > 0;
        i += k;
        if (ok && i < n) {
            ok = parse_tz(s + i, n - i, &off) == 0;
            aware = true;
            i = n;
        }
    }
    if (!ok || i != n) {
        cv r = code_repr(vm, str);
        if (r)
            code_raise(vm, &code_exc_ValueError, "Invalid isoformat string: %s", code_str_cstr(r));
        code_decref(vm, r);
        return CV_NULL;
    }
    cv tz = aware ? code_dt_tz_new(vm, off, CV_NULL) : CV_NULL;
    if (aware && !tz)
        return CV_NULL;
    cv r = code_dt_new(vm, t, y, mo, d, h, mi, sec, us, tz);
    code_decref(vm, tz);
    return r;
}
