/* The datetime module without the clock (issue 8): the calendar helpers,
 * timedelta and timezone, the module's members and the types' class
 * attributes (timedelta.max, timezone.utc...). date, datetime and time are in
 * code_mod_date.c, formatting and parsing in code_mod_dt_fmt.c.
 *
 * As CPython's, the calendar is the proleptic Gregorian one, years 1..9999,
 * day 1 being 0001-01-01. now(), today() and utcnow() raise
 * NotImplementedError "code mode has no clock"; so does anything that needs
 * the local time zone (naive timestamp(), astimezone() without a zone). */
#include <math.h>
#include <string.h>

#include "code/code_dt.h"

const char *const code_dt_day_names[7] = {
    "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday",
};
const char *const code_dt_month_names[13] = {
    "", "January", "February", "March", "April", "May", "June", "July", "August",
    "September", "October", "November", "December",
};

/* ---- calendar --------------------------------------------------------------- */

bool code_dt_is_leap(int y)
{
    return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
}

int code_dt_days_in_month(int y, int m)
{
    static const int dim[13] = { 0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    return m == 2 && code_dt_is_leap(y) ? 29 : dim[m];
}

static int64_t days_before_year(int y)
{
    int64_t k = y - 1;
    return k * 365 + k / 4 - k / 100 + k / 400;
}

static int days_before_month(int y, int m)
{
    static const int dbm[13] = { 0, 0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334 };
    return dbm[m] + (m > 2 && code_dt_is_leap(y));
}

int64_t code_dt_ymd_to_ord(int y, int m, int d)
{
    return days_before_year(y) + days_before_month(y, m) + d;
}

/* CPython's ord_to_ymd: through 400-, 100-, 4- and 1-year cycles. */
void code_dt_ord_to_ymd(int64_t ord, int *y, int *m, int *d)
{
    int64_t n = ord - 1;
    int64_t n400 = n / 146097;
    n %= 146097;
    int64_t n100 = n / 36524;
    n %= 36524;
    int64_t n4 = n / 1461;
    n %= 1461;
    int64_t n1 = n / 365;
    n %= 365;
    int year = (int)(n400 * 400 + n100 * 100 + n4 * 4 + n1 + 1);
    if (n1 == 4 || n100 == 4) {
        *y = year - 1;
        *m = 12;
        *d = 31;
        return;
    }
    int month = (int)((n + 50) >> 5);
    int before = days_before_month(year, month);
    if (before > n)
        before = days_before_month(year, --month);
    *y = year;
    *m = month;
    *d = (int)(n - before + 1);
}

int code_dt_weekday(int y, int m, int d)
{
    return (int)((code_dt_ymd_to_ord(y, m, d) + 6) % 7);
}

/* The Monday of ISO week 1 of year y. */
static int64_t iso_week1_monday(int y)
{
    int64_t first = code_dt_ymd_to_ord(y, 1, 1);
    int64_t wd = (first + 6) % 7;
    int64_t monday = first - wd;
    if (wd > 3)
        monday += 7;
    return monday;
}

void code_dt_iso_calendar(int y, int m, int d, int *iy, int *iw, int *iwd)
{
    int64_t today = code_dt_ymd_to_ord(y, m, d), diff = today - iso_week1_monday(y);
    int64_t week = diff >= 0 ? diff / 7 : -((-diff + 6) / 7);
    if (week < 0) {
        y--;
        week = (today - iso_week1_monday(y)) / 7;
    } else if (week >= 52 && today >= iso_week1_monday(y + 1)) {
        y++;
        week = 0;
    }
    *iy = y;
    *iw = (int)week + 1;
    *iwd = (int)((today + 6) % 7) + 1;
}

/* ---- timedelta ---------------------------------------------------------------------- */

__int128 code_dt_delta_us(cv td)
{
    const dt_delta *d = dt_delta_of(td);
    return (__int128)d->days * US_PER_DAY + (__int128)d->seconds * US_PER_SEC + d->us;
}

static __int128 floordiv128(__int128 a, __int128 b)
{
    __int128 q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    return q;
}

cv code_dt_delta_from_us(code_vm *vm, __int128 us)
{
    __int128 days = floordiv128(us, US_PER_DAY);
    __int128 rem = us - days * US_PER_DAY;
    if (days > DT_MAXDAYS || days < -DT_MAXDAYS) {
        if (days > 1000000000000000LL || days < -1000000000000000LL)
            return code_raise(vm, &code_exc_OverflowError,
                              "Python int too large to convert to C int");
        return code_raise(vm, &code_exc_OverflowError,
                          "days=%lld; must have magnitude <= 999999999", (long long)days);
    }
    dt_delta *d = code_obj_new(vm, &code_type_dt_timedelta, sizeof *d);
    if (!d)
        return CV_NULL;
    d->days = (int32_t)days;
    d->seconds = (int32_t)(rem / US_PER_SEC);
    d->us = (int32_t)(rem % US_PER_SEC);
    return cv_of(d);
}

/* One constructor component, scaled to microseconds, as CPython's accum():
 * ints exactly, the fractional part of a float in double arithmetic, its
 * sub-microsecond remainder into *leftover (rounded once at the end). */
static int delta_part(code_vm *vm, const char *name, cv v, int64_t scale, __int128 *whole,
                      double *leftover)
{
    if (!v)
        return 0;
    int k = cv_kind(v);
    if (k == CODE_K_INT || k == CODE_K_BOOL) {
        int64_t i;
        if (k == CODE_K_BOOL)
            i = v == CODE_TRUE;
        else if (code_int_to_i64(v, &i) != 1)
            return code_raise_i(vm, &code_exc_OverflowError,
                                "Python int too large to convert to C int");
        *whole += (__int128)i * scale;
        return 0;
    }
    if (k == CODE_K_FLOAT) {
        double x = ((code_float *)cv_obj(v))->v;
        if (!isfinite(x))
            return code_raise_i(vm, isnan(x) ? &code_exc_ValueError : &code_exc_OverflowError,
                                isnan(x) ? "cannot convert float NaN to integer"
                                         : "cannot convert float infinity to integer");
        double ip, f = modf(x, &ip);
        if (fabs(ip) > 1e20)
            return code_raise_i(vm, &code_exc_OverflowError,
                                "days=%.0f; must have magnitude <= 999999999",
                                ip * (double)scale / (double)US_PER_DAY);
        *whole += (__int128)ip * scale;
        if (f == 0.0)
            return 0;
        f = modf((double)scale * f, &ip);
        *whole += (__int128)ip;
        *leftover += f;
        return 0;
    }
    return code_raise_i(vm, &code_exc_TypeError, "unsupported type for timedelta %s component: %s",
                        name, code_type_name(v));
}

static cv delta_new(code_vm *vm, const code_type *t, cv *args, size_t nargs, cv kwnames)
{
    cv a[7] = { CV_NULL, CV_NULL, CV_NULL, CV_NULL, CV_NULL, CV_NULL, CV_NULL };
    if (code_args(vm, "timedelta", args, nargs, kwnames,
                  "|days,seconds,microseconds,milliseconds,minutes,hours,weeks", &a[0], &a[1],
                  &a[2], &a[3], &a[4], &a[5], &a[6]) < 0)
        return CV_NULL;
    static const char *const names[7] = {
        "days", "seconds", "microseconds", "milliseconds", "minutes", "hours", "weeks",
    };
    static const int64_t scale[7] = {
        US_PER_DAY, US_PER_SEC, 1, 1000, 60 * US_PER_SEC, 3600 * US_PER_SEC, 7 * US_PER_DAY,
    };
    __int128 whole = 0;
    double left = 0;
    /* CPython accumulates microseconds first, then milliseconds, seconds... */
    static const int order[7] = { 2, 3, 1, 4, 5, 0, 6 };
    for (int j = 0; j < 7; j++) {
        int i = order[j];
        if (delta_part(vm, names[i], a[i], scale[i], &whole, &left) < 0)
            return CV_NULL;
    }
    if (left != 0) {
        /* to the nearest microsecond, a half to the even total */
        double w = round(left);
        if (fabs(w - left) == 0.5) {
            int odd = (int)(whole & 1);
            w = 2.0 * round((left + odd) * 0.5) - odd;
        }
        whole += (__int128)w;
    }
    return code_dt_delta_from_us(vm, whole);
}

cv code_dt_delta_repr(code_vm *vm, cv self)
{
    const dt_delta *d = dt_delta_of(self);
    code_sb b;
    code_sb_init(&b, vm);
    code_sb_addc(&b, "datetime.timedelta(");
    const char *sep = "";
    if (d->days) {
        code_sb_printf(&b, "days=%d", d->days);
        sep = ", ";
    }
    if (d->seconds) {
        code_sb_printf(&b, "%sseconds=%d", sep, d->seconds);
        sep = ", ";
    }
    if (d->us)
        code_sb_printf(&b, "%smicroseconds=%d", sep, d->us);
    if (!d->days && !d->seconds && !d->us)
        code_sb_addc(&b, "0");
    code_sb_addc(&b, ")");
    return code_sb_finish(&b);
}

static cv delta_str(code_vm *vm, cv self)
{
    const dt_delta *d = dt_delta_of(self);
    code_sb b;
    code_sb_init(&b, vm);
    if (d->days)
        code_sb_printf(&b, "%d day%s, ", d->days, d->days == 1 || d->days == -1 ? "" : "s");
    code_sb_printf(&b, "%d:%02d:%02d", d->seconds / 3600, d->seconds / 60 % 60, d->seconds % 60);
    if (d->us)
        code_sb_printf(&b, ".%06d", d->us);
    return code_sb_finish(&b);
}

static int delta_hash(code_vm *vm, cv self, uint64_t *h)
{
    __int128 us = code_dt_delta_us(self);
    *h = ((uint64_t)(us >> 64) * 0x9E3779B97F4A7C15u) ^ (uint64_t)us;
    if (*h == (uint64_t)-1)
        *h = (uint64_t)-2;
    return 0;
}

static cv cmp_result(int c, int op)
{
    switch (op) {
    case CODE_CMP_LT: return code_bool(c < 0);
    case CODE_CMP_LE: return code_bool(c <= 0);
    case CODE_CMP_EQ: return code_bool(c == 0);
    case CODE_CMP_NE: return code_bool(c != 0);
    case CODE_CMP_GT: return code_bool(c > 0);
    default: return code_bool(c >= 0);
    }
}

static cv delta_compare(code_vm *vm, cv a, cv b, int op)
{
    if (!cv_is(a, &code_type_dt_timedelta) || !cv_is(b, &code_type_dt_timedelta))
        return CODE_NOTIMPL;
    __int128 x = code_dt_delta_us(a), y = code_dt_delta_us(b);
    return cmp_result(x < y ? -1 : x > y, op);
}

/* x / y rounded half to even, as CPython's _PyLong_DivmodNear. */
static __int128 div_near(__int128 x, __int128 y)
{
    __int128 q = floordiv128(x, y), r = x - q * y;
    __int128 twice = 2 * r;
    if (y < 0) {
        twice = -twice;
        y = -y;
    }
    if (twice > y || (twice == y && (q & 1)))
        q++;
    return q;
}

static cv delta_binop(code_vm *vm, int op, cv a, cv b)
{
    bool ad = cv_is(a, &code_type_dt_timedelta), bd = cv_is(b, &code_type_dt_timedelta);
    if (ad && bd) {
        __int128 x = code_dt_delta_us(a), y = code_dt_delta_us(b);
        switch (op) {
        case CODE_OP_ADD: return code_dt_delta_from_us(vm, x + y);
        case CODE_OP_SUB: return code_dt_delta_from_us(vm, x - y);
        case CODE_OP_TRUEDIV:
            if (y == 0)
                return code_raise(vm, &code_exc_ZeroDivisionError,
                                  "integer division or modulo by zero");
            return code_float_new(vm, (double)((long double)x / (long double)y));
        case CODE_OP_FLOORDIV:
            if (y == 0)
                return code_raise(vm, &code_exc_ZeroDivisionError,
                                  "integer division or modulo by zero");
            return code_int_from_i64(vm, (int64_t)floordiv128(x, y));
        case CODE_OP_MOD:
            if (y == 0)
                return code_raise(vm, &code_exc_ZeroDivisionError,
                                  "integer division or modulo by zero");
            return code_dt_delta_from_us(vm, x - floordiv128(x, y) * y);
        default: return CODE_NOTIMPL;
        }
    }
    cv td = ad ? a : b, other = ad ? b : a;
    int k = cv_kind(other);
    bool is_int = k == CODE_K_INT || k == CODE_K_BOOL, is_float = k == CODE_K_FLOAT;
    if (!is_int && !is_float)
        return CODE_NOTIMPL;
    __int128 x = code_dt_delta_us(td);
    int64_t i = 0;
    double f = 0;
    if (is_int && code_as_i64(vm, other, &i) < 0)
        return CV_NULL;
    if (is_float)
        f = ((code_float *)cv_obj(other))->v;
    if (op == CODE_OP_MUL) {
        if (is_int)
            return code_dt_delta_from_us(vm, x * i);
        if (!isfinite(f))
            return code_raise(vm, &code_exc_ValueError, "cannot convert float %s to integer",
                              isnan(f) ? "NaN" : "infinity");
        return code_dt_delta_from_us(vm, (__int128)nearbyintl((long double)x * f));
    }
    if (!ad)                     /* int / timedelta and the like */
        return CODE_NOTIMPL;
    if (op == CODE_OP_TRUEDIV || op == CODE_OP_FLOORDIV) {
        if (is_int) {
            if (i == 0)
                return code_raise(vm, &code_exc_ZeroDivisionError,
                                  "integer division or modulo by zero");
            return code_dt_delta_from_us(vm, op == CODE_OP_FLOORDIV ? floordiv128(x, i)
                                                               : div_near(x, i));
        }
        if (op == CODE_OP_FLOORDIV)
            return CODE_NOTIMPL;
        if (f == 0)
            return code_raise(vm, &code_exc_ZeroDivisionError,
                              "integer division or modulo by zero");
        return code_dt_delta_from_us(vm, (__int128)nearbyintl((long double)x / f));
    }
    return CODE_NOTIMPL;
}

static cv delta_unop(code_vm *vm, int op, cv a)
{
    if (op == CODE_UOP_NEG)
        return code_dt_delta_from_us(vm, -code_dt_delta_us(a));
    if (op == CODE_UOP_POS)
        return code_incref(a);
    return CODE_NOTIMPL;
}

static int delta_truth(code_vm *vm, cv self)
{
    return code_dt_delta_us(self) != 0;
}

static cv delta_getattr(code_vm *vm, cv self, const char *name)
{
    const dt_delta *d = dt_delta_of(self);
    if (!strcmp(name, "days"))
        return code_int_from_i64(vm, d->days);
    if (!strcmp(name, "seconds"))
        return code_int_from_i64(vm, d->seconds);
    if (!strcmp(name, "microseconds"))
        return code_int_from_i64(vm, d->us);
    return CV_NULL;
}

static cv delta_total_seconds(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (code_args_nokw(vm, "total_seconds", nargs, kwnames, 1, 1) < 0)
        return CV_NULL;
    return code_float_new(vm, (double)((long double)code_dt_delta_us(args[0]) / 1e6L));
}

static const code_method delta_methods[] = {
    { "total_seconds", delta_total_seconds }, { NULL, NULL },
};

const code_type code_type_dt_timedelta = {
    .ob = CODE_STATIC_HDR(&code_type_type),
    .name = "datetime.timedelta",
    .kind = CODE_K_OTHER,
    .repr = code_dt_delta_repr,
    .str = delta_str,
    .hash = delta_hash,
    .compare = delta_compare,
    .binop = delta_binop,
    .unop = delta_unop,
    .truth = delta_truth,
    .getattr = delta_getattr,
    .methods = delta_methods,
    .new = delta_new,
};

/* ---- timezone ------------------------------------------------------------------------ */

static void tz_dealloc(code_vm *vm, code_obj *o)
{
    code_decref(vm, ((dt_tz *)o)->name);
}

cv code_dt_tz_new(code_vm *vm, int64_t offset_us, cv name)
{
    dt_tz *z = code_obj_new(vm, &code_type_dt_timezone, sizeof *z);
    if (!z)
        return CV_NULL;
    z->offset_us = offset_us;
    z->name = name ? code_incref(name) : CV_NULL;
    return cv_of(z);
}

static cv tz_new(code_vm *vm, const code_type *t, cv *args, size_t nargs, cv kwnames)
{
    cv off, name = CV_NULL;
    if (code_args(vm, "timezone", args, nargs, kwnames, "offset,|name", &off, &name) < 0)
        return CV_NULL;
    if (!cv_is(off, &code_type_dt_timedelta))
        return code_raise(vm, &code_exc_TypeError,
                          "timezone() argument 1 must be datetime.timedelta, not %s",
                          code_type_name(off));
    if (name && !cv_is(name, &code_type_str))
        return code_raise(vm, &code_exc_TypeError, "timezone() argument 2 must be str, not %s",
                          code_type_name(name));
    __int128 us = code_dt_delta_us(off);
    if (us <= -US_PER_DAY || us >= US_PER_DAY) {
        cv r = code_dt_delta_repr(vm, off);
        if (!r)
            return CV_NULL;
        code_raise(vm, &code_exc_ValueError,
                   "offset must be a timedelta strictly between -timedelta(hours=24) and "
                   "timedelta(hours=24), not %s.", code_str_cstr(r));
        code_decref(vm, r);
        return CV_NULL;
    }
    return code_dt_tz_new(vm, (int64_t)us, name);
}

cv code_dt_tz_name(code_vm *vm, cv tz)
{
    const dt_tz *z = dt_tz_of(tz);
    if (z->name)
        return code_incref(z->name);
    if (z->offset_us == 0)
        return code_str_from_cstr(vm, "UTC");
    code_sb b;
    code_sb_init(&b, vm);
    code_sb_addc(&b, "UTC");
    code_dt_fmt_offset(&b, z->offset_us, ":");
    return code_sb_finish(&b);
}

static cv tz_repr(code_vm *vm, cv self)
{
    const dt_tz *z = dt_tz_of(self);
    if (z->offset_us == 0 && !z->name)
        return code_str_from_cstr(vm, "datetime.timezone.utc");
    cv off = code_dt_delta_from_us(vm, z->offset_us);
    if (!off)
        return CV_NULL;
    code_sb b;
    code_sb_init(&b, vm);
    code_sb_addc(&b, "datetime.timezone(");
    code_sb_repr(&b, off);
    if (z->name) {
        code_sb_addc(&b, ", ");
        code_sb_repr(&b, z->name);
    }
    code_sb_addc(&b, ")");
    code_decref(vm, off);
    return code_sb_finish(&b);
}

static cv tz_str(code_vm *vm, cv self)
{
    return code_dt_tz_name(vm, self);
}

static int tz_hash(code_vm *vm, cv self, uint64_t *h)
{
    *h = (uint64_t)dt_tz_of(self)->offset_us * 0x9E3779B97F4A7C15u;
    return 0;
}

static cv tz_compare(code_vm *vm, cv a, cv b, int op)
{
    if (!cv_is(a, &code_type_dt_timezone) || !cv_is(b, &code_type_dt_timezone) ||
        (op != CODE_CMP_EQ && op != CODE_CMP_NE))
        return CODE_NOTIMPL;
    bool eq = dt_tz_of(a)->offset_us == dt_tz_of(b)->offset_us;
    return code_bool(op == CODE_CMP_EQ ? eq : !eq);
}

static cv tz_utcoffset(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (code_args_nokw(vm, "utcoffset", nargs, kwnames, 2, 2) < 0)
        return CV_NULL;
    return code_dt_delta_from_us(vm, dt_tz_of(args[0])->offset_us);
}

static cv tz_tzname(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (code_args_nokw(vm, "tzname", nargs, kwnames, 2, 2) < 0)
        return CV_NULL;
    return code_dt_tz_name(vm, args[0]);
}

static cv tz_dst(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (code_args_nokw(vm, "dst", nargs, kwnames, 2, 2) < 0)
        return CV_NULL;
    return CODE_NONE;
}

static const code_method tz_methods[] = {
    { "utcoffset", tz_utcoffset }, { "tzname", tz_tzname }, { "dst", tz_dst }, { NULL, NULL },
};

const code_type code_type_dt_timezone = {
    .ob = CODE_STATIC_HDR(&code_type_type),
    .name = "datetime.timezone",
    .kind = CODE_K_OTHER,
    .dealloc = tz_dealloc,
    .repr = tz_repr,
    .str = tz_str,
    .hash = tz_hash,
    .compare = tz_compare,
    .methods = tz_methods,
    .new = tz_new,
};

/* ---- class attributes and the module ------------------------------------------------------ */

cv code_lib_type_attr(code_vm *vm, const code_type *t, const char *name)
{
    bool mn = !strcmp(name, "min"), mx = !strcmp(name, "max"), res = !strcmp(name, "resolution");
    if (t == &code_type_dt_timedelta) {
        if (mn)
            return code_dt_delta_from_us(vm, -(__int128)DT_MAXDAYS * US_PER_DAY);
        if (mx)
            return code_dt_delta_from_us(vm, ((__int128)DT_MAXDAYS + 1) * US_PER_DAY - 1);
        if (res)
            return code_dt_delta_from_us(vm, 1);
    } else if (t == &code_type_dt_date || t == &code_type_dt_datetime ||
               t == &code_type_dt_time) {
        bool date = t == &code_type_dt_date;
        if (mn)
            return code_dt_new(vm, t, 1, 1, 1, 0, 0, 0, 0, CV_NULL);
        if (mx)
            return date ? code_dt_new(vm, t, 9999, 12, 31, 0, 0, 0, 0, CV_NULL)
                        : code_dt_new(vm, t, 9999, 12, 31, 23, 59, 59, 999999, CV_NULL);
        if (res)
            return code_dt_delta_from_us(vm, date ? US_PER_DAY : 1);
    } else if (t == &code_type_dt_timezone) {
        if (!strcmp(name, "utc"))
            return code_dt_tz_new(vm, 0, CV_NULL);
        if (mn || mx)
            return code_dt_tz_new(vm, (mn ? -1 : 1) * (US_PER_DAY - 60 * US_PER_SEC), CV_NULL);
    }
    return CV_NULL;
}

int code_mod_datetime_init(code_vm *vm, cv dict)
{
    if (code_lib_set(vm, dict, "date", cv_of(&code_type_dt_date)) < 0 ||
        code_lib_set(vm, dict, "datetime", cv_of(&code_type_dt_datetime)) < 0 ||
        code_lib_set(vm, dict, "time", cv_of(&code_type_dt_time)) < 0 ||
        code_lib_set(vm, dict, "timedelta", cv_of(&code_type_dt_timedelta)) < 0 ||
        code_lib_set(vm, dict, "timezone", cv_of(&code_type_dt_timezone)) < 0 ||
        code_lib_set(vm, dict, "MINYEAR", cv_from_small(DT_MINYEAR)) < 0 ||
        code_lib_set(vm, dict, "MAXYEAR", cv_from_small(DT_MAXYEAR)) < 0 ||
        code_lib_set_steal(vm, dict, "UTC", code_dt_tz_new(vm, 0, CV_NULL)) < 0)
        return -1;
    return 0;
}
