/* Lookups in the generated Unicode tables (code_unicode_tab.c): binary
 * searches over sorted ranges, so the tables stay a few tens of KiB. */
#include "code/code_unicode_tab.h"

#include <string.h>

bool code_uprop(uint32_t cp, enum code_uprop p)
{
    const code_uprop_table *t = &code_uprop_tables[p];
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cp < t->r[mid][0])
            hi = mid;
        else if (cp > t->r[mid][1])
            lo = mid + 1;
        else
            return true;
    }
    return false;
}

static size_t put_utf8(uint32_t c, char *o)
{
    if (c < 0x80) {
        o[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        o[0] = (char)(0xC0 | (c >> 6));
        o[1] = (char)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        o[0] = (char)(0xE0 | (c >> 12));
        o[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        o[2] = (char)(0x80 | (c & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (c >> 18));
    o[1] = (char)(0x80 | ((c >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((c >> 6) & 0x3F));
    o[3] = (char)(0x80 | (c & 0x3F));
    return 4;
}

size_t code_ucase(uint32_t cp, enum code_ucase m, char *out)
{
    const code_ucase_table *t = &code_ucase_tables[m];
    size_t lo = 0, hi = t->nmulti;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cp < t->multi[mid].cp)
            hi = mid;
        else if (cp > t->multi[mid].cp)
            lo = mid + 1;
        else {
            const char *s = code_ucase_specials[t->multi[mid].ix];
            size_t n = strlen(s);
            memcpy(out, s, n);
            return n;
        }
    }
    lo = 0;
    hi = t->nruns;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const code_ucase_run *r = &t->runs[mid];
        if (cp < r->lo)
            hi = mid;
        else if (cp > r->hi)
            lo = mid + 1;
        else {
            if ((cp - r->lo) % r->stride == 0)
                cp = (uint32_t)((int64_t)cp + r->delta);
            break;
        }
    }
    return put_utf8(cp, out);
}

int code_udecimal(uint32_t cp)
{
    /* Every decimal range of Unicode is whole runs of 0..9. */
    const code_uprop_table *t = &code_uprop_tables[CODE_UP_DECIMAL];
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cp < t->r[mid][0])
            hi = mid;
        else if (cp > t->r[mid][1])
            lo = mid + 1;
        else
            return (int)((cp - t->r[mid][0]) % 10);
    }
    return -1;
}
