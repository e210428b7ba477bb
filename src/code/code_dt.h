/* The datetime module's private declarations: timedelta, timezone, date,
 * datetime and time objects, the proleptic Gregorian calendar helpers, and
 * formatting/parsing (code_mod_dt_fmt.c). */
#ifndef CELLA_CODE_DT_H
#define CELLA_CODE_DT_H

#include "code/code_lib.h"

#define DT_MINYEAR 1
#define DT_MAXYEAR 9999
#define DT_MAXORDINAL 3652059    /* date(9999, 12, 31).toordinal() */
#define DT_MAXDAYS 999999999
#define US_PER_SEC 1000000LL
#define US_PER_DAY 86400000000LL

typedef struct dt_delta {
    code_obj ob;
    int32_t days;                /* -999999999 .. 999999999 */
    int32_t seconds;             /* 0 .. 86399 */
    int32_t us;                  /* 0 .. 999999 */
} dt_delta;

typedef struct dt_tz {
    code_obj ob;
    int64_t offset_us;           /* strictly inside +-24 h */
    cv name;                     /* str, or CV_NULL */
} dt_tz;

/* date, datetime and time share one layout; a date leaves the time zero. */
typedef struct dt_obj {
    code_obj ob;
    int32_t year;
    int32_t month, day, hour, minute, second, us;
    cv tz;                       /* a timezone or CV_NULL (naive); datetime/time */
} dt_obj;

extern const code_type code_type_dt_timedelta, code_type_dt_timezone, code_type_dt_date,
    code_type_dt_datetime, code_type_dt_time;

static inline dt_delta *dt_delta_of(cv v) { return (dt_delta *)cv_obj(v); }
static inline dt_obj *dt_of(cv v) { return (dt_obj *)cv_obj(v); }
static inline dt_tz *dt_tz_of(cv v) { return (dt_tz *)cv_obj(v); }

/* calendar (code_mod_datetime.c) */
bool code_dt_is_leap(int y);
int code_dt_days_in_month(int y, int m);
int64_t code_dt_ymd_to_ord(int y, int m, int d);
void code_dt_ord_to_ymd(int64_t ord, int *y, int *m, int *d);
int code_dt_weekday(int y, int m, int d);          /* Monday 0 */
void code_dt_iso_calendar(int y, int m, int d, int *iy, int *iw, int *iwd);
extern const char *const code_dt_day_names[7], *const code_dt_month_names[13];

/* A timedelta from total microseconds; OverflowError past its range. */
cv code_dt_delta_from_us(code_vm *vm, __int128 us);
__int128 code_dt_delta_us(cv td);
/* A timezone of that offset (and name, borrowed, or CV_NULL). */
cv code_dt_tz_new(code_vm *vm, int64_t offset_us, cv name);
/* "UTC", "UTC+05:30" or the given name. */
cv code_dt_tz_name(code_vm *vm, cv tz);

/* A date (time CV_NULL), or a datetime, or a time; range-checked. */
cv code_dt_new(code_vm *vm, const code_type *t, int y, int mo, int d, int h, int mi, int s, int us,
          cv tz);
/* Microseconds since 0001-01-01 of a date/datetime's local fields. */
int64_t code_dt_local_us(const dt_obj *o);
/* A datetime from local microseconds since 0001-01-01 (OverflowError "date
 * value out of range" outside years 1..9999). */
cv code_dt_from_local_us(code_vm *vm, const code_type *t, int64_t us, cv tz);
/* The UTC offset of an aware datetime/time in microseconds (0 if naive). */
int64_t code_dt_offset(const dt_obj *o);

/* formatting and parsing (code_mod_dt_fmt.c) */
cv code_dt_strftime(code_vm *vm, cv self, cv fmt);
cv code_dt_strptime(code_vm *vm, cv *args, size_t nargs, cv kwnames);
cv code_dt_isoformat(code_vm *vm, const dt_obj *o, const code_type *t, char sep, const char *timespec);
cv code_dt_fromisoformat(code_vm *vm, const code_type *t, cv s);
/* "+HH:MM[:SS[.ffffff]]" of an offset, sep ":" or "". */
void code_dt_fmt_offset(code_sb *b, int64_t off_us, const char *sep);

/* the types' extra slots used across files */
cv code_dt_delta_repr(code_vm *vm, cv self);
cv code_dt_date_binop(code_vm *vm, int op, cv a, cv b);

#endif
