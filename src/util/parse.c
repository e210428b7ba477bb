#include "util/parse.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>

int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out, cella_err *err)
{
    if (!s || !*s)
        return cella_err_set(err, 0, "empty number");
    uint64_t v = 0;
    for (const char *p = s; *p; p++) {
        if (!isdigit((unsigned char)*p))
            return cella_err_set(err, 0, "'%s' is not a whole number", s);
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return cella_err_set(err, 0, "'%s' is too large", s);
        v = v * 10 + d;
    }
    if (v < min || v > max)
        return cella_err_set(err, 0, "%s is out of range [%llu, %llu]", s,
                             (unsigned long long)min, (unsigned long long)max);
    *out = v;
    return 0;
}

/* decimal := digit+ ("." digit+)?   -> value scaled by 1000 (three decimals kept) */
static int parse_decimal_milli(const char *s, size_t len, uint64_t *out)
{
    uint64_t ip = 0, frac = 0;
    size_t i = 0, fd = 0;
    if (len == 0 || !isdigit((unsigned char)s[0]))
        return -1;
    for (; i < len && isdigit((unsigned char)s[i]); i++) {
        if (ip > UINT64_MAX / 10000)     /* keep room for the *1000 below */
            return -1;
        ip = ip * 10 + (uint64_t)(s[i] - '0');
    }
    if (i < len && s[i] == '.') {
        i++;
        if (i == len)
            return -1;
        for (; i < len && isdigit((unsigned char)s[i]); i++, fd++)
            if (fd < 3)
                frac = frac * 10 + (uint64_t)(s[i] - '0');
        while (fd < 3) {
            frac *= 10;
            fd++;
        }
    }
    if (i != len)
        return -1;
    *out = ip * 1000 + frac;
    return 0;
}

int parse_duration_ms(const char *s, uint64_t max_ms, uint64_t *out, cella_err *err)
{
    if (!s || !*s)
        return cella_err_set(err, 0, "empty duration");
    size_t len = strlen(s), num = len;
    while (num > 0 && isalpha((unsigned char)s[num - 1]))
        num--;
    const char *unit = s + num;
    uint64_t per_unit_ms;           /* milliseconds per unit */
    if (!*unit || !strcmp(unit, "s"))
        per_unit_ms = 1000;
    else if (!strcmp(unit, "ms"))
        per_unit_ms = 1;
    else if (!strcmp(unit, "m"))
        per_unit_ms = 60 * 1000;
    else if (!strcmp(unit, "h"))
        per_unit_ms = 3600 * 1000;
    else
        return cella_err_set(err, 0, "'%s': unknown unit '%s' (use ms, s, m or h)", s, unit);
    uint64_t milli;
    if (parse_decimal_milli(s, num, &milli) < 0)
        return cella_err_set(err, 0, "'%s' is not a duration (e.g. 500ms, 5s, 2m)", s);
    if (per_unit_ms && milli > UINT64_MAX / per_unit_ms)
        return cella_err_set(err, 0, "'%s' is too long", s);
    uint64_t ms = milli * per_unit_ms / 1000;
    if (ms == 0 && milli > 0)
        ms = 1;                      /* round a positive sub-millisecond value up */
    if (ms > max_ms)
        return cella_err_set(err, 0, "'%s' is longer than the maximum of %llu ms", s,
                             (unsigned long long)max_ms);
    *out = ms;
    return 0;
}

int parse_cpus_milli(const char *s, uint32_t max_milli, uint32_t *out, cella_err *err)
{
    uint64_t milli;
    if (!s || parse_decimal_milli(s, strlen(s), &milli) < 0)
        return cella_err_set(err, 0, "'%s' is not a CPU count (e.g. 1, 0.5, 2)", s ? s : "");
    if (milli < 10 || milli > max_milli)
        return cella_err_set(err, 0, "CPU count %s is out of range [0.01, %u.%03u]", s,
                             max_milli / 1000, max_milli % 1000);
    *out = (uint32_t)milli;
    return 0;
}

int parse_size(const char *s, uint64_t max, uint64_t *out, cella_err *err)
{
    if (!s || !isdigit((unsigned char)s[0]))
        return cella_err_set(err, 0, "'%s' is not a size (e.g. 1048576, 64K, 1M)", s ? s : "");
    size_t digits = strspn(s, "0123456789");
    const char *suf = s + digits;
    unsigned shift = 0;
    if (*suf) {
        const char *units = "KMG";
        const char *u = strchr(units, toupper((unsigned char)*suf));
        if (!u || (suf[1] && strcmp(suf + 1, "iB") && strcmp(suf + 1, "B")))
            return cella_err_set(err, 0, "'%s': unknown size suffix (use K, M or G)", s);
        shift = 10u * (unsigned)(u - units + 1);
    }
    char num[32];
    if (digits >= sizeof(num))
        return cella_err_set(err, 0, "'%s' is too large", s);
    memcpy(num, s, digits);
    num[digits] = '\0';
    uint64_t v;
    if (parse_u64(num, 0, UINT64_MAX >> shift, &v, err) < 0)
        return cella_err_set(err, 0, "'%s' is too large", s);
    v <<= shift;
    if (v > max)
        return cella_err_set(err, 0, "'%s' is larger than the maximum of %llu bytes", s,
                             (unsigned long long)max);
    *out = v;
    return 0;
}

bool env_name_valid(const char *s, size_t len)
{
    if (len == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return false;
    for (size_t i = 1; i < len; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
            return false;
    return true;
}

bool env_assignment_valid(const char *kv)
{
    const char *eq = strchr(kv, '=');
    return eq && env_name_valid(kv, (size_t)(eq - kv));
}
