/* datetime's date, datetime and time types. datetime derives date (as in
 * CPython: isinstance(dt, date)), so date's methods it does not redefine are
 * found through its base.
 *
 * Class methods (fromisoformat, fromordinal, strptime...) are in the method
 * tables: called on the type they get their arguments as they are, called
 * on an instance they get the instance first, which they skip. */
#include <math.h>
#include <string.h>

#include "code/code_dt.h"

#define EPOCH_US ((int64_t)719162 * US_PER_DAY)   /* 1970-01-01, as code_dt_local_us counts */

static bool is_dt(cv v) { return cv_is(v, &code_type_dt_datetime); }
static bool is_date(cv v) { return cv_is(v, &code_type_dt_date); }
static bool is_time(cv v) { return cv_is(v, &code_type_dt_time); }

cv code_dt_new(code_vm *vm, const code_type *t, int y, int mo, int d, int h, int mi, int s, int us,
          cv tz)
{
    if (t != &code_type_dt_time) {
        if (y < DT_MINYEAR || y > DT_MAXYEAR)
            return code_raise(vm, &code_exc_ValueError, "year %d is out of range", y);
        if (mo < 1 || mo > 12)
            return code_raise(vm, &code_exc_ValueError, "month must be in 1..12");
        if (d < 1 || d > code_dt_days_in_month(y, mo))
            return code_raise(vm, &code_exc_ValueError, "day is out of range for month");
    }
    if (h < 0 || h > 23)
        return code_raise(vm, &code_exc_ValueError, "hour must be in 0..23");
    if (mi < 0 || mi > 59)
        return code_raise(vm, &code_exc_ValueError, "minute must be in 0..59");
    if (s < 0 || s > 59)
        return code_raise(vm, &code_exc_ValueError, "second must be in 0..59");
    if (us < 0 || us > 999999)
        return code_raise(vm, &code_exc_ValueError, "microsecond must be in 0..999999");
    if (tz && tz != CODE_NONE && !cv_is(tz, &code_type_dt_timezone))
        return code_raise(vm, &code_exc_TypeError,
                          "tzinfo argument must be None or of a tzinfo subclass, not type '%s'",
                          code_type_name(tz));
    dt_obj *o = code_obj_new(vm, t, sizeof *o);
    if (!o)
        return CV_NULL;
    o->year = t == &code_type_dt_time ? 1900 : y;
    o->month = t == &code_type_dt_time ? 1 : mo;
    o->day = t == &code_type_dt_time ? 1 : d;
    o->hour = h;
    o->minute = mi;
    o->second = s;
    o->us = us;
    o->tz = tz && tz != CODE_NONE ? code_incref(tz) : CV_NULL;
    return cv_of(o);
}

static void dt_dealloc(code_vm *vm, code_obj *o)
{
    code_decref(vm, ((dt_obj *)o)->tz);
}

int64_t code_dt_local_us(const dt_obj *o)
{
    return (code_dt_ymd_to_ord(o->year, o->month, o->day) - 1) * US_PER_DAY +
           ((int64_t)o->hour * 3600 + o->minute * 60 + o->second) * US_PER_SEC + o->us;
}

int64_t code_dt_offset(const dt_obj *o)
{
    return o->tz ? dt_tz_of(o->tz)->offset_us : 0;
}

cv code_dt_from_local_us(code_vm *vm, const code_type *t, int64_t us, cv tz)
{
    int64_t days = us >= 0 ? us / US_PER_DAY : -((-us + US_PER_DAY - 1) / US_PER_DAY);
    int64_t rem = us - days * US_PER_DAY;
    if (days < 0 || days >= DT_MAXORDINAL)
        return code_raise(vm, &code_exc_OverflowError, "date value out of range");
    int y, m, d;
    code_dt_ord_to_ymd(days + 1, &y, &m, &d);
    int64_t secs = rem / US_PER_SEC;
    return code_dt_new(vm, t, y, m, d, (int)(secs / 3600), (int)(secs / 60 % 60), (int)(secs % 60),
                  (int)(rem % US_PER_SEC), tz);
}

/* ---- constructors --------------------------------------------------------------- */

static int ints(code_vm *vm, cv *in, int *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int64_t v;
        if (!in[i])
            continue;
        if (code_as_i64(vm, in[i], &v) < 0)
            return -1;
        out[i] = v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int)v;
    }
    return 0;
}

static cv date_new(code_vm *vm, const code_type *t, cv *args, size_t nargs, cv kwnames)
{
    cv a[3];
    int v[3];
    if (code_args(vm, "date", args, nargs, kwnames, "year,month,day", &a[0], &a[1], &a[2]) < 0 ||
        ints(vm, a, v, 3) < 0)
        return CV_NULL;
    return code_dt_new(vm, t, v[0], v[1], v[2], 0, 0, 0, 0, CV_NULL);
}

static cv datetime_new(code_vm *vm, const code_type *t, cv *args, size_t nargs, cv kwnames)
{
    cv a[7] = { 0 }, tz = CODE_NONE, fold = CV_NULL;
    int v[7] = { 0 };
    if (code_args(vm, "datetime", args, nargs, kwnames,
                  "year,month,day,|hour,minute,second,microsecond,tzinfo,*,fold", &a[0], &a[1],
                  &a[2], &a[3], &a[4], &a[5], &a[6], &tz, &fold) < 0 ||
        ints(vm, a, v, 7) < 0)
        return CV_NULL;
    return code_dt_new(vm, t, v[0], v[1], v[2], v[3], v[4], v[5], v[6], tz);
}

static cv time_new(code_vm *vm, const code_type *t, cv *args, size_t nargs, cv kwnames)
{
    cv a[4] = { 0 }, tz = CODE_NONE, fold = CV_NULL;
    int v[4] = { 0 };
    if (code_args(vm, "time", args, nargs, kwnames, "|hour,minute,second,microsecond,tzinfo,*,fold",
                  &a[0], &a[1], &a[2], &a[3], &tz, &fold) < 0 ||
        ints(vm, a, v, 4) < 0)
        return CV_NULL;
    return code_dt_new(vm, t, 1900, 1, 1, v[0], v[1], v[2], v[3], tz);
}

/* ---- repr, str, hash, compare ------------------------------------------------------- */

static cv dt_repr(code_vm *vm, cv self)
{
    const dt_obj *o = dt_of(self);
    code_sb b;
    code_sb_init(&b, vm);
    if (is_date(self)) {
        code_sb_printf(&b, "datetime.date(%d, %d, %d)", o->year, o->month, o->day);
        return code_sb_finish(&b);
    }
    if (is_dt(self))
        code_sb_printf(&b, "datetime.datetime(%d, %d, %d, %d, %d", o->year, o->month, o->day,
                       o->hour, o->minute);
    else
        code_sb_printf(&b, "datetime.time(%d, %d", o->hour, o->minute);
    if (o->us)
        code_sb_printf(&b, ", %d, %d", o->second, o->us);
    else if (o->second)
        code_sb_printf(&b, ", %d", o->second);
    if (o->tz) {
        code_sb_addc(&b, ", tzinfo=");
        code_sb_repr(&b, o->tz);
    }
    code_sb_addc(&b, ")");
    return code_sb_finish(&b);
}

static cv dt_str(code_vm *vm, cv self)
{
    return code_dt_isoformat(vm, dt_of(self), cv_type(self), ' ', "auto");
}

static int dt_hash(code_vm *vm, cv self, uint64_t *h)
{
    const dt_obj *o = dt_of(self);
    uint64_t v = (uint64_t)(code_dt_local_us(o) - code_dt_offset(o));
    *h = (v * 0x9E3779B97F4A7C15u) ^ (uint64_t)cv_type(self)->kind;
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

static cv dt_compare(code_vm *vm, cv a, cv b, int op)
{
    bool eqop = op == CODE_CMP_EQ || op == CODE_CMP_NE;
    const code_type *ta = cv_type(a), *tb = cv_type(b);
    bool ka = ta == &code_type_dt_date || ta == &code_type_dt_datetime || ta == &code_type_dt_time;
    bool kb = tb == &code_type_dt_date || tb == &code_type_dt_datetime || tb == &code_type_dt_time;
    if (!ka || !kb)
        return CODE_NOTIMPL;
    if (ta != tb) {
        if (ta == &code_type_dt_time || tb == &code_type_dt_time)
            return CODE_NOTIMPL;
        if (eqop)                /* a date is never equal to a datetime */
            return code_bool(op == CODE_CMP_NE);
        return code_raise(vm, &code_exc_TypeError, "can't compare %s to %s",
                          "datetime.datetime", "datetime.date");
    }
    const dt_obj *x = dt_of(a), *y = dt_of(b);
    if (!x->tz != !y->tz) {
        if (eqop)
            return code_bool(op == CODE_CMP_NE);
        return code_raise(vm, &code_exc_TypeError, "can't compare offset-naive and offset-aware %s",
                          ta == &code_type_dt_time ? "times" : "datetimes");
    }
    int64_t u = code_dt_local_us(x) - code_dt_offset(x), w = code_dt_local_us(y) - code_dt_offset(y);
    return cmp_result(u < w ? -1 : u > w, op);
}

/* ---- arithmetic ------------------------------------------------------------------------ */

cv code_dt_date_binop(code_vm *vm, int op, cv a, cv b)
{
    bool ad = cv_is(a, &code_type_dt_timedelta), bd = cv_is(b, &code_type_dt_timedelta);
    if (op == CODE_OP_ADD && (ad || bd) && !(ad && bd)) {
        cv x = ad ? b : a, td = ad ? a : b;
        if (!is_date(x) && !is_dt(x))
            return CODE_NOTIMPL;
        const dt_obj *o = dt_of(x);
        if (is_date(x)) {
            int64_t ord = code_dt_ymd_to_ord(o->year, o->month, o->day) + dt_delta_of(td)->days;
            if (ord < 1 || ord > DT_MAXORDINAL)
                return code_raise(vm, &code_exc_OverflowError, "date value out of range");
            int y, m, d;
            code_dt_ord_to_ymd(ord, &y, &m, &d);
            return code_dt_new(vm, &code_type_dt_date, y, m, d, 0, 0, 0, 0, CV_NULL);
        }
        __int128 us = (__int128)code_dt_local_us(o) + code_dt_delta_us(td);
        if (us < 0 || us >= (__int128)DT_MAXORDINAL * US_PER_DAY)
            return code_raise(vm, &code_exc_OverflowError, "date value out of range");
        return code_dt_from_local_us(vm, &code_type_dt_datetime, (int64_t)us, o->tz);
    }
    if (op != CODE_OP_SUB || ad)
        return CODE_NOTIMPL;
    if (bd) {
        /* datetime - td is datetime + (-td); date - td is date + timedelta(-td.days),
         * as CPython (the seconds of td are ignored, not borrowed from) */
        __int128 us = is_date(a) ? (__int128)dt_delta_of(b)->days * US_PER_DAY : code_dt_delta_us(b);
        cv neg = code_dt_delta_from_us(vm, -us);
        if (!neg)
            return CV_NULL;
        cv r = code_dt_date_binop(vm, CODE_OP_ADD, a, neg);
        code_decref(vm, neg);
        return r;
    }
    if (cv_type(a) != cv_type(b) || is_time(a))
        return CODE_NOTIMPL;
    const dt_obj *x = dt_of(a), *y = dt_of(b);
    if (!x->tz != !y->tz)
        return code_raise(vm, &code_exc_TypeError,
                          "can't subtract offset-naive and offset-aware datetimes");
    return code_dt_delta_from_us(vm, (__int128)(code_dt_local_us(x) - code_dt_offset(x)) -
                                    (code_dt_local_us(y) - code_dt_offset(y)));
}

/* ---- attributes ------------------------------------------------------------------------- */

static cv dt_getattr(code_vm *vm, cv self, const char *name)
{
    const dt_obj *o = dt_of(self);
    bool date_part = !is_time(self), time_part = !is_date(self);
    if (date_part && !strcmp(name, "year"))
        return code_int_from_i64(vm, o->year);
    if (date_part && !strcmp(name, "month"))
        return code_int_from_i64(vm, o->month);
    if (date_part && !strcmp(name, "day"))
        return code_int_from_i64(vm, o->day);
    if (time_part && !strcmp(name, "hour"))
        return code_int_from_i64(vm, o->hour);
    if (time_part && !strcmp(name, "minute"))
        return code_int_from_i64(vm, o->minute);
    if (time_part && !strcmp(name, "second"))
        return code_int_from_i64(vm, o->second);
    if (time_part && !strcmp(name, "microsecond"))
        return code_int_from_i64(vm, o->us);
    if (time_part && !strcmp(name, "tzinfo"))
        return code_incref(o->tz ? o->tz : CODE_NONE);
    if (time_part && !strcmp(name, "fold"))
        return cv_from_small(0);
    return CV_NULL;
}

/* ---- methods ------------------------------------------------------------------------------ */

static cv no_clock(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    return code_raise(vm, &code_exc_NotImplementedError, "code mode has no clock");
}

static cv m_isoformat(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    cv self, sep = CV_NULL, ts = CV_NULL;
    if (is_date(args[0])) {
        if (code_args(vm, "isoformat", args, nargs, kwnames, "self", &self) < 0)
            return CV_NULL;
    } else if (is_time(args[0])) {
        if (code_args(vm, "isoformat", args, nargs, kwnames, "self,|timespec", &self, &ts) < 0)
            return CV_NULL;
    } else if (code_args(vm, "isoformat", args, nargs, kwnames, "self,|sep,timespec", &self, &sep,
                         &ts) < 0) {
        return CV_NULL;
    }
    char c = 'T';
    if (sep) {
        if (!cv_is(sep, &code_type_str) || ((code_str *)cv_obj(sep))->nchars != 1)
            return code_raise(vm, &code_exc_TypeError,
                              "isoformat() argument 1 must be a unicode character, not %s",
                              code_type_name(sep));
        if (code_str_len(sep) != 1)
            return code_raise(vm, &code_exc_NotImplementedError,
                              "isoformat() with a non-ASCII separator is not supported");
        c = code_str_cstr(sep)[0];
    }
    if (ts && !cv_is(ts, &code_type_str))
        return code_raise(vm, &code_exc_TypeError,
                          "isoformat() argument 2 must be str, not %s", code_type_name(ts));
    return code_dt_isoformat(vm, dt_of(self), cv_type(self), c, ts ? code_str_cstr(ts) : "auto");
}

static cv m_strftime(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    cv self, fmt;
    if (code_args(vm, "strftime", args, nargs, kwnames, "self,format", &self, &fmt) < 0)
        return CV_NULL;
    if (!cv_is(fmt, &code_type_str))
        return code_raise(vm, &code_exc_TypeError, "strftime() argument 1 must be str, not %s",
                          code_type_name(fmt));
    return code_dt_strftime(vm, self, fmt);
}

/* format(d, spec) and f"{d:spec}": strftime, or str() for an empty spec. */
static cv m_format(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (code_args_nokw(vm, "__format__", nargs, kwnames, 2, 2) < 0)
        return CV_NULL;
    if (!cv_is(args[1], &code_type_str))
        return code_raise(vm, &code_exc_TypeError, "__format__() argument 1 must be str, not %s",
                          code_type_name(args[1]));
    if (code_str_len(args[1]) == 0)
        return code_str_of(vm, args[0]);
    return code_dt_strftime(vm, args[0], args[1]);
}

static cv m_replace(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    cv self, a[7] = { 0 }, tz = CV_NULL, fold = CV_NULL;
    const dt_obj *o = dt_of(args[0]);
    const code_type *t = cv_type(args[0]);
    int v[7] = { o->year, o->month, o->day, o->hour, o->minute, o->second, o->us };
    int rc;
    if (t == &code_type_dt_date)
        rc = code_args(vm, "replace", args, nargs, kwnames, "self,|year,month,day", &self, &a[0],
                       &a[1], &a[2]);
    else if (t == &code_type_dt_time)
        rc = code_args(vm, "replace", args, nargs, kwnames,
                       "self,|hour,minute,second,microsecond,tzinfo,*,fold", &self, &a[3], &a[4],
                       &a[5], &a[6], &tz, &fold);
    else
        rc = code_args(vm, "replace", args, nargs, kwnames,
                       "self,|year,month,day,hour,minute,second,microsecond,tzinfo,*,fold",
                       &self, &a[0], &a[1], &a[2], &a[3], &a[4], &a[5], &a[6], &tz, &fold);
    if (rc < 0 || ints(vm, a, v, 7) < 0)
        return CV_NULL;
    return code_dt_new(vm, t, v[0], v[1], v[2], v[3], v[4], v[5], v[6], tz ? tz : o->tz);
}

static cv date_ret_int(code_vm *vm, cv *args, size_t nargs, cv kwnames, const char *name, int which)
{
    if (code_args_nokw(vm, name, nargs, kwnames, 1, 1) < 0)
        return CV_NULL;
    const dt_obj *o = dt_of(args[0]);
    if (which == 0)
        return cv_from_small(code_dt_weekday(o->year, o->month, o->day));
    if (which == 1)
        return cv_from_small(code_dt_weekday(o->year, o->month, o->day) + 1);
    return cv_from_small(code_dt_ymd_to_ord(o->year, o->month, o->day));
}

static cv m_weekday(code_vm *vm, cv *a, size_t n, cv kw) { return date_ret_int(vm, a, n, kw, "weekday", 0); }
static cv m_isoweekday(code_vm *vm, cv *a, size_t n, cv kw) { return date_ret_int(vm, a, n, kw, "isoweekday", 1); }
static cv m_toordinal(code_vm *vm, cv *a, size_t n, cv kw) { return date_ret_int(vm, a, n, kw, "toordinal", 2); }

/* IsoCalendarDate: CPython's named tuple (year, week, weekday); here a small
 * type that indexes, iterates, unpacks and compares as that tuple. */
typedef struct iso_obj {
    code_obj ob;
    cv t;                        /* the tuple */
} iso_obj;

static void iso_dealloc(code_vm *vm, code_obj *o)
{
    code_decref(vm, ((iso_obj *)o)->t);
}

static cv iso_tuple(cv self)
{
    return ((iso_obj *)cv_obj(self))->t;
}

static cv iso_repr(code_vm *vm, cv self)
{
    const code_tuple *t = (const code_tuple *)cv_obj(iso_tuple(self));
    return code_str_fmt(vm, "datetime.IsoCalendarDate(year=%lld, week=%lld, weekday=%lld)",
                        (long long)cv_small(t->v[0]), (long long)cv_small(t->v[1]),
                        (long long)cv_small(t->v[2]));
}

static int iso_hash(code_vm *vm, cv self, uint64_t *h) { return code_hash(vm, iso_tuple(self), h); }
static ssize_t iso_len(code_vm *vm, cv self) { return 3; }
static cv iso_iter(code_vm *vm, cv self) { return code_iter(vm, iso_tuple(self)); }
static cv iso_getitem(code_vm *vm, cv self, cv key) { return code_getitem(vm, iso_tuple(self), key); }
static int iso_contains(code_vm *vm, cv self, cv x) { return code_contains(vm, iso_tuple(self), x); }

static const code_type code_type_dt_isocal;

static cv iso_compare(code_vm *vm, cv a, cv b, int op)
{
    return code_compare(vm, cv_is(a, &code_type_dt_isocal) ? iso_tuple(a) : a,
                        cv_is(b, &code_type_dt_isocal) ? iso_tuple(b) : b, op);
}

static cv iso_getattr(code_vm *vm, cv self, const char *name)
{
    const code_tuple *t = (const code_tuple *)cv_obj(iso_tuple(self));
    int i = !strcmp(name, "year") ? 0 : !strcmp(name, "week") ? 1 : !strcmp(name, "weekday") ? 2 : -1;
    return i < 0 ? CV_NULL : code_incref(t->v[i]);
}

static const code_type code_type_dt_isocal = {
    .ob = CODE_STATIC_HDR(&code_type_type),
    .name = "datetime.IsoCalendarDate",
    .kind = CODE_K_OTHER,
    .dealloc = iso_dealloc,
    .repr = iso_repr,
    .hash = iso_hash,
    .compare = iso_compare,
    .len = iso_len,
    .iter = iso_iter,
    .getitem = iso_getitem,
    .contains = iso_contains,
    .getattr = iso_getattr,
};

static cv m_isocalendar(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (code_args_nokw(vm, "isocalendar", nargs, kwnames, 1, 1) < 0)
        return CV_NULL;
    const dt_obj *o = dt_of(args[0]);
    int y, w, d;
    code_dt_iso_calendar(o->year, o->month, o->day, &y, &w, &d);
    cv t = code_tuple_pack(vm, 3, cv_from_small(y), cv_from_small(w), cv_from_small(d));
    iso_obj *r = t ? code_obj_new(vm, &code_type_dt_isocal, sizeof *r) : NULL;
    if (!r) {
        code_decref(vm, t);
        return CV_NULL;
    }
    r->t = t;
    return cv_of(r);
}

static cv m_ctime(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (code_args_nokw(vm, "ctime", nargs, kwnames, 1, 1) < 0)
        return CV_NULL;
    const dt_obj *o = dt_of(args[0]);
    int wd = code_dt_weekday(o->year, o->month, o->day);
    return code_str_fmt(vm, "%.3s %.3s %2d %02d:%02d:%02d %04d", code_dt_day_names[wd],
                        code_dt_month_names[o->month], o->day, o->hour, o->minute, o->second, o->year);
}

/* Skips the instance when a class method is called on one. */
static size_t cls_skip(cv *args, size_t nargs, const code_type *t)
{
    return nargs > 0 && cv_is(args[0], t) ? 1 : 0;
}

static cv fromiso(code_vm *vm, cv *args, size_t nargs, cv kwnames, const code_type *t)
{
    size_t k = cls_skip(args, nargs, t);
    if (code_args_nokw(vm, "fromisoformat", nargs - k, kwnames, 1, 1) < 0)
        return CV_NULL;
    if (!cv_is(args[k], &code_type_str))
        return code_raise(vm, &code_exc_TypeError, "fromisoformat: argument must be str");
    return code_dt_fromisoformat(vm, t, args[k]);
}

static cv date_fromiso(code_vm *vm, cv *a, size_t n, cv kw) { return fromiso(vm, a, n, kw, &code_type_dt_date); }
static cv datetime_fromiso(code_vm *vm, cv *a, size_t n, cv kw) { return fromiso(vm, a, n, kw, &code_type_dt_datetime); }
static cv time_fromiso(code_vm *vm, cv *a, size_t n, cv kw) { return fromiso(vm, a, n, kw, &code_type_dt_time); }

static cv fromordinal(code_vm *vm, cv *args, size_t nargs, cv kwnames, const code_type *t)
{
    size_t k = cls_skip(args, nargs, t);
    int64_t ord;
    if (code_args_nokw(vm, "fromordinal", nargs - k, kwnames, 1, 1) < 0 ||
        code_as_i64(vm, args[k], &ord) < 0)
        return CV_NULL;
    if (ord < 1 || ord > DT_MAXORDINAL)
        return code_raise(vm, &code_exc_ValueError, "ordinal must be >= 1");
    int y, m, d;
    code_dt_ord_to_ymd(ord, &y, &m, &d);
    return code_dt_new(vm, t, y, m, d, 0, 0, 0, 0, CV_NULL);
}

static cv date_fromordinal(code_vm *vm, cv *a, size_t n, cv kw) { return fromordinal(vm, a, n, kw, &code_type_dt_date); }
static cv datetime_fromordinal(code_vm *vm, cv *a, size_t n, cv kw) { return fromordinal(vm, a, n, kw, &code_type_dt_datetime); }

static cv m_date(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (code_args_nokw(vm, "date", nargs, kwnames, 1, 1) < 0)
        return CV_NULL;
    const dt_obj *o = dt_of(args[0]);
    return code_dt_new(vm, &code_type_dt_date, o->year, o->month, o->day, 0, 0, 0, 0, CV_NULL);
}

static cv time_of(code_vm *vm, cv *args, size_t nargs, cv kwnames, bool tz)
{
    if (code_args_nokw(vm, tz ? "timetz" : "time", nargs, kwnames, 1, 1) < 0)
        return CV_NULL;
    const dt_obj *o = dt_of(args[0]);
    return code_dt_new(vm, &code_type_dt_time, 1900, 1, 1, o->hour, o->minute, o->second, o->us,
                  tz ? o->tz : CV_NULL);
}

static cv m_time(code_vm *vm, cv *a, size_t n, cv kw) { return time_of(vm, a, n, kw, false); }
static cv m_timetz(code_vm *vm, cv *a, size_t n, cv kw) { return time_of(vm, a, n, kw, true); }

static cv m_utcoffset(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (code_args_nokw(vm, "utcoffset", nargs, kwnames, 1, 1) < 0)
        return CV_NULL;
    const dt_obj *o = dt_of(args[0]);
    return o->tz ? code_dt_delta_from_us(vm, code_dt_offset(o)) : CODE_NONE;
}

static cv m_tzname(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (code_args_nokw(vm, "tzname", nargs, kwnames, 1, 1) < 0)
        return CV_NULL;
    const dt_obj *o = dt_of(args[0]);
    return o->tz ? code_dt_tz_name(vm, o->tz) : CODE_NONE;
}

static cv m_dst(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (code_args_nokw(vm, "dst", nargs, kwnames, 1, 1) < 0)
        return CV_NULL;
    return CODE_NONE;
}

static cv m_timestamp(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (code_args_nokw(vm, "timestamp", nargs, kwnames, 1, 1) < 0)
        return CV_NULL;
    const dt_obj *o = dt_of(args[0]);
    if (!o->tz)
        return code_raise(vm, &code_exc_NotImplementedError,
                          "code mode has no clock: timestamp() of a naive datetime needs the "
                          "local time zone");
    int64_t us = code_dt_local_us(o) - code_dt_offset(o) - EPOCH_US;
    return code_float_new(vm, (double)((long double)us / 1e6L));
}

static cv m_astimezone(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    cv self, tz = CODE_NONE;
    if (code_args(vm, "astimezone", args, nargs, kwnames, "self,|tz", &self, &tz) < 0)
        return CV_NULL;
    const dt_obj *o = dt_of(self);
    if (tz == CODE_NONE || !o->tz)
        return code_raise(vm, &code_exc_NotImplementedError,
                          "code mode has no clock: astimezone() needs an aware datetime and a "
                          "time zone");
    if (!cv_is(tz, &code_type_dt_timezone))
        return code_raise(vm, &code_exc_TypeError,
                          "tzinfo argument must be None or of a tzinfo subclass, not type '%s'",
                          code_type_name(tz));
    int64_t utc = code_dt_local_us(o) - code_dt_offset(o);
    return code_dt_from_local_us(vm, &code_type_dt_datetime, utc + dt_tz_of(tz)->offset_us, tz);
}

/* fromtimestamp(ts, tz) and utcfromtimestamp(ts). */
static cv from_ts(code_vm *vm, cv *args, size_t nargs, cv kwnames, bool utc)
{
    size_t k = cls_skip(args, nargs, &code_type_dt_datetime);
    cv ts, tz = CODE_NONE;
    if (code_args(vm, utc ? "utcfromtimestamp" : "fromtimestamp", args + k, nargs - k, kwnames,
                  utc ? "timestamp" : "timestamp,|tz", &ts, &tz) < 0)
        return CV_NULL;
    if (!utc && tz == CODE_NONE)
        return code_raise(vm, &code_exc_NotImplementedError,
                          "code mode has no clock: fromtimestamp() needs tz (the local time "
                          "zone is unknown)");
    if (tz != CODE_NONE && !cv_is(tz, &code_type_dt_timezone))
        return code_raise(vm, &code_exc_TypeError,
                          "tzinfo argument must be None or of a tzinfo subclass, not type '%s'",
                          code_type_name(tz));
    double d;
    if (code_as_double(vm, ts, &d) < 0)
        return CV_NULL;
    if (!isfinite(d) || fabs(d) > 1e12)
        return code_raise(vm, &code_exc_ValueError, "year is out of range");
    int64_t us = (int64_t)nearbyint(d * 1e6) + EPOCH_US;
    if (tz != CODE_NONE)
        us += dt_tz_of(tz)->offset_us;
    if (us < 0 || us >= (int64_t)DT_MAXORDINAL * US_PER_DAY)
        return code_raise(vm, &code_exc_ValueError, "year is out of range");
    return code_dt_from_local_us(vm, &code_type_dt_datetime, us, tz == CODE_NONE ? CV_NULL : tz);
}

static cv m_fromtimestamp(code_vm *vm, cv *a, size_t n, cv kw) { return from_ts(vm, a, n, kw, false); }
static cv m_utcfromtimestamp(code_vm *vm, cv *a, size_t n, cv kw) { return from_ts(vm, a, n, kw, true); }

static cv m_combine(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    size_t k = nargs >= 3 && is_time(args[2]) ? 1 : 0;
    cv d, t, tz = CV_NULL;
    if (code_args(vm, "combine", args + k, nargs - k, kwnames, "date,time,|tzinfo", &d, &t, &tz) < 0)
        return CV_NULL;
    if (!is_date(d) && !is_dt(d))
        return code_raise(vm, &code_exc_TypeError,
                          "combine() argument 1 must be datetime.date, not %s", code_type_name(d));
    if (!is_time(t))
        return code_raise(vm, &code_exc_TypeError,
                          "combine() argument 2 must be datetime.time, not %s", code_type_name(t));
    const dt_obj *a = dt_of(d), *b = dt_of(t);
    return code_dt_new(vm, &code_type_dt_datetime, a->year, a->month, a->day, b->hour, b->minute,
                  b->second, b->us, tz ? tz : b->tz);
}

static cv m_strptime(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    size_t k = cls_skip(args, nargs, &code_type_dt_datetime);
    return code_dt_strptime(vm, args + k, nargs - k, kwnames);
}

static const code_method date_methods[] = {
    { "__format__", m_format },
    { "isoformat", m_isoformat }, { "strftime", m_strftime }, { "replace", m_replace },
    { "weekday", m_weekday }, { "isoweekday", m_isoweekday }, { "isocalendar", m_isocalendar },
    { "toordinal", m_toordinal }, { "ctime", m_ctime }, { "fromisoformat", date_fromiso },
    { "fromordinal", date_fromordinal }, { "today", no_clock }, { NULL, NULL },
};

static const code_method datetime_methods[] = {
    { "__format__", m_format },
    { "isoformat", m_isoformat }, { "strftime", m_strftime }, { "replace", m_replace },
    { "date", m_date }, { "time", m_time }, { "timetz", m_timetz },
    { "utcoffset", m_utcoffset }, { "tzname", m_tzname }, { "dst", m_dst },
    { "timestamp", m_timestamp }, { "astimezone", m_astimezone },
    { "fromisoformat", datetime_fromiso }, { "fromordinal", datetime_fromordinal },
    { "fromtimestamp", m_fromtimestamp }, { "utcfromtimestamp", m_utcfromtimestamp },
    { "combine", m_combine }, { "strptime", m_strptime },
    { "now", no_clock }, { "utcnow", no_clock }, { "today", no_clock }, { NULL, NULL },
};

static const code_method time_methods[] = {
    { "__format__", m_format },
    { "isoformat", m_isoformat }, { "strftime", m_strftime }, { "replace", m_replace },
    { "utcoffset", m_utcoffset }, { "tzname", m_tzname }, { "dst", m_dst },
    { "fromisoformat", time_fromiso }, { NULL, NULL },
};

const code_type code_type_dt_date = {
    .ob = CODE_STATIC_HDR(&code_type_type),
    .name = "datetime.date",
    .kind = CODE_K_OTHER,
    .dealloc = dt_dealloc,
    .repr = dt_repr,
    .str = dt_str,
    .hash = dt_hash,
    .compare = dt_compare,
    .binop = code_dt_date_binop,
    .getattr = dt_getattr,
    .methods = date_methods,
    .new = date_new,
};

const code_type code_type_dt_datetime = {
    .ob = CODE_STATIC_HDR(&code_type_type),
    .name = "datetime.datetime",
    .base = &code_type_dt_date,
    .kind = CODE_K_OTHER,
    .dealloc = dt_dealloc,
    .repr = dt_repr,
    .str = dt_str,
    .hash = dt_hash,
    .compare = dt_compare,
    .binop = code_dt_date_binop,
    .getattr = dt_getattr,
    .methods = datetime_methods,
    .new = datetime_new,
};

const code_type code_type_dt_time = {
    .ob = CODE_STATIC_HDR(&code_type_type),
    .name = "datetime.time",
    .kind = CODE_K_OTHER,
    .dealloc = dt_dealloc,
    .repr = dt_repr,
    .str = dt_str,
    .hash = dt_hash,
    .compare = dt_compare,
    .getattr = dt_getattr,
    .methods = time_methods,
    .new = time_new,
};
