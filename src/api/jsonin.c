#include "api/jsonin.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/parse.h"
#include "util/text.h"

int jin_parse(const uint8_t *body, size_t n, json_t **out, core_error *e)
{
    size_t i = 0;
    while (i < n && strchr(" \t\r\n", body[i]))
        i++;
    if (i == n) {
        *out = json_object();
        return 0;
    }
    json_error_t je;
    /* Duplicate keys would let two readers of one body see different
     * requests; \u0000 inside strings is refused (paths, argv, env). */
    json_t *j = json_loadb((const char *)body, n, JSON_REJECT_DUPLICATES, &je);
    if (!j)
        return core_fail(e, S001, "invalid request: malformed JSON at line %d column %d: %s",
                         je.line, je.column, je.text);
    if (!json_is_object(j)) {
        json_decref(j);
        return core_fail(e, S001, "invalid request: the body must be a JSON object");
    }
    *out = j;
    return 0;
}

int jin_known(json_t *o, const char *const *allowed, core_error *e)
{
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v) {
        bool ok = false;
        for (size_t i = 0; allowed[i] && !ok; i++)
            ok = !strcmp(allowed[i], k);
        if (!ok)
            return core_fail(e, S001, "invalid request: unknown field '%.64s'", k);
    }
    return 0;
}

int jin_missing(core_error *e, const char *key)
{
    return core_fail(e, S001, "invalid request: missing field '%s'", key);
}

static int wrong(core_error *e, const char *key, const char *want)
{
    return core_fail(e, S001, "invalid request: field '%s' must be %s", key, want);
}

int jin_str(json_t *o, const char *key, const char **out, core_error *e)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return wrong(e, key, "a string");
    *out = json_string_value(v);
    return 1;
}

int jin_bool(json_t *o, const char *key, bool *out, core_error *e)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_boolean(v))
        return wrong(e, key, "true or false");
    *out = json_is_true(v);
    return 1;
}

int jin_u64(json_t *o, const char *key, uint64_t min, uint64_t max, uint64_t *out, core_error *e)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_integer(v))
        return wrong(e, key, "a whole number");
    json_int_t x = json_integer_value(v);
    if (x < 0 || (uint64_t)x < min || (uint64_t)x > max)
        return core_fail(e, S001, "invalid request: field '%s' must be between %llu and %llu",
                         key, (unsigned long long)min, (unsigned long long)max);
    *out = (uint64_t)x;
    return 1;
}

int jin_cpus(json_t *o, const char *key, uint32_t *out, core_error *e)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_number(v))
        return wrong(e, key, "a number of CPUs");
    double x = json_number_value(v);
    if (!(x >= 0.01 && x <= 256))
        return core_fail(e, S001, "invalid request: field '%s' must be between 0.01 and 256", key);
    *out = (uint32_t)lround(x * 1000);
    return 1;
}

int jin_strv(json_t *o, const char *key, char ***out, core_error *e)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_array(v))
        return wrong(e, key, "an array of strings");
    size_t n = json_array_size(v);
    char **r = cella_calloc(n + 1, sizeof(char *));
    for (size_t i = 0; i < n; i++) {
        json_t *s = json_array_get(v, i);
        if (!json_is_string(s)) {
            cella_strv_free(r);
            return core_fail(e, S001, "invalid request: field '%s' item %zu must be a string", key, i);
        }
        r[i] = cella_strdup(json_string_value(s));
    }
    *out = r;
    return 1;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int jin_env_shape(json_t *o, const char *key, char ***out, core_error *e)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return 0;
    if (json_is_array(v))
        return jin_strv(o, key, out, e);
    if (!json_is_object(v))
        return wrong(e, key, "a list of \"K=V\" strings or an object of strings");
    size_t n = json_object_size(v), k = 0;
    const char **names = cella_calloc(n + 1, sizeof(char *));
    const char *name;
    json_t *val;
    json_object_foreach(v, name, val) {
        if (!json_is_string(val)) {
            cella_free(names);
            return core_fail(e, S001, "invalid request: %s.%.64s must be a string", key, name);
        }
        /* "A=B": "x" would pass as A=B=x, a valid A: a map's name holds no '='. */
        if (!name[0] || strchr(name, '=')) {
            char *bad[1] = {(char *)name};
            cella_free(names);
            return core_env_bad_names(e, key, bad, 1);
        }
        names[k++] = name;
    }
    /* Key order, so two callers passing the same map get the same environment. */
    qsort(names, n, sizeof(char *), cmp_str);
    char **r = cella_calloc(n + 1, sizeof(char *));
    for (size_t i = 0; i < n; i++)
        r[i] = cella_asprintf("%s=%s", names[i], json_string_value(json_object_get(v, names[i])));
    cella_free(names);
    *out = r;
    return 1;
}

int jin_env(json_t *o, const char *key, char ***out, core_error *e)
{
    char **r = NULL;
    int rc = jin_env_shape(o, key, &r, e);
    if (rc == 1 && core_env_check(key, r, e) < 0) {
        cella_strv_free(r);
        return -1;
    }
    *out = r;
    return rc;
}

int jin_base64(json_t *o, const char *key, cbuf *out, bool *present, core_error *e)
{
    const char *s = NULL;
    int got = jin_str(o, key, &s, e);
    if (got <= 0)
        return got;
    cella_err err;
    if (base64_decode(out, s, strlen(s), &err) < 0)
        return core_fail(e, S001, "invalid request: field '%s': %s", key, err.msg);
    if (present)
        *present = true;
    return 1;
}
