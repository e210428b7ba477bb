#include "core/config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <yaml.h>

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/parse.h"

#define CONFIG_MAX_BYTES (1u << 20)
#define TOKENS_MAX_BYTES (1u << 20)
/* The deepest legitimate shape is workers: [ {config: {per_image_caps: {x: {}}}} ];
 * anything far deeper is a mistake or an attack on the parser. */
#define YAML_MAX_DEPTH 32
#define MAX_CPUS_MILLI 256000u
#define MIN_MEMORY_MB 16u
#define MAX_MEMORY_MB 1048576u
#define TOKEN_MIN_LEN 16

enum kind { K_STR, K_OPT_STR, K_U32, K_U64, K_SIZE, K_CPUS, K_BOOL, K_STRV, K_ALLOWLIST, K_CUSTOM,
             K_CAPS };

typedef struct field {
    const char *name;
    enum kind kind;
    size_t off;
    uint64_t min, max;
} field;

#define F(n, k, lo, hi) { #n, k, offsetof(cella_config, n), lo, hi }
/* One table drives the YAML reader and the range checks of config_validate,
 * so a limit cannot be enforced in one and forgotten in the other. */
static const field fields[] = {
    F(listen, K_STR, 0, 0),
    F(state_dir, K_OPT_STR, 0, 0),
    F(tokens_file, K_OPT_STR, 0, 0),
    F(default_image, K_STR, 0, 0),
    F(image_allowlist, K_ALLOWLIST, 0, 0),
    F(custom_images, K_CUSTOM, 0, 0),
    F(per_image_caps, K_CAPS, 0, 0),
    F(max_concurrent_sandboxes, K_U32, 1, 100000),
    { "default_cpus", K_CPUS, offsetof(cella_config, default_cpus_milli), 10, MAX_CPUS_MILLI },
    F(default_memory_mb, K_U64, MIN_MEMORY_MB, MAX_MEMORY_MB),
    F(default_idle_timeout_secs, K_U64, 1, 31536000),
    F(auto_install, K_BOOL, 0, 0),
    F(max_exec_timeout_ms, K_U64, 1, 2592000000u),
    F(default_exec_timeout_ms, K_U64, 1, 2592000000u),
    F(max_execs_per_sandbox, K_U32, 1, 64),
    F(pool_size, K_U32, 0, 64),
    F(max_body_bytes, K_SIZE, 1024, 1073741824),
    F(output_limit_bytes, K_SIZE, 1, 268435456),
    F(pids_max, K_U32, 16, 65536),
    F(max_connections, K_U32, 8, 65536),
    F(max_connections_per_ip, K_U32, 1, 65536),
    F(max_sandboxes_per_tenant, K_U32, 0, 100000),
    F(max_idle_timeout_secs, K_U64, 1, 31536000),
    F(workspace_quota_bytes, K_SIZE, 0, 1ull << 50),
    F(gateway_max_sessions, K_U32, 1, 100000),
    F(allowed_origins, K_STRV, 0, 0),
    F(gateway_idle_timeout_secs, K_U64, 1, 31536000),
    F(gateway_memory_mb, K_U64, MIN_MEMORY_MB, MAX_MEMORY_MB),
    F(drain_timeout_secs, K_U64, 0, 31536000),
    F(code_workers, K_U32, 1, 64),
    F(code_queue_max, K_U32, 0, 100000),
    F(code_max_paused_runs, K_U32, 1, 1000000),
    F(code_max_paused_runs_per_tenant, K_U32, 0, 1000000),
    F(code_run_ttl_secs, K_U64, 1, 31536000),
    F(code_resident_secs, K_U64, 1, 31536000),
    F(code_max_time_ms, K_U64, 1, 86400000),
    F(code_max_memory_mb, K_U64, MIN_MEMORY_MB, 65536),
};
#undef F
#define N_FIELDS (sizeof(fields) / sizeof(fields[0]))
_Static_assert(N_FIELDS <= 64, "duplicate-key detection keeps one bit per field");

static void free_custom(cfg_custom_image *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        cella_free(v[i].name);
        cella_free(v[i].rootfs);
    }
    cella_free(v);
}

static void free_caps(cfg_image_cap *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        cella_free(v[i].image);
    cella_free(v);
}

void config_init(cella_config *c)
{
    memset(c, 0, sizeof(*c));
    c->listen = cella_strdup(CFG_DEFAULT_LISTEN);
    c->max_concurrent_sandboxes = 32;
    c->default_cpus_milli = 1000;
    c->default_memory_mb = 512;
    c->default_idle_timeout_secs = 300;
    c->max_exec_timeout_ms = 3600000;
    c->default_exec_timeout_ms = 300000;
    c->max_execs_per_sandbox = 4;
    c->pool_size = 2;
    c->max_body_bytes = 16u << 20;
    c->output_limit_bytes = 1u << 20;
    c->pids_max = 256;
    c->max_connections = 512;
    c->max_connections_per_ip = 128;
    c->max_idle_timeout_secs = 86400;
    c->workspace_quota_bytes = 4ull << 30;
    c->default_image = cella_strdup("python");
    c->gateway_max_sessions = 50;
    c->gateway_idle_timeout_secs = 900;
    c->gateway_memory_mb = 512;
    c->drain_timeout_secs = 600;
    c->code_workers = 2;
    c->code_queue_max = 64;
    c->code_max_paused_runs = 256;
    c->code_run_ttl_secs = 300;
    c->code_resident_secs = 60;
    c->code_max_time_ms = 60000;
    c->code_max_memory_mb = 1024;
}

void config_free(cella_config *c)
{
    cella_free(c->listen);
    cella_free(c->state_dir);
    cella_free(c->tokens_file);
    cella_free(c->config_file);
    cella_free(c->default_image);
    cella_strv_free(c->image_allowlist);
    cella_strv_free(c->allowed_origins);
    free_custom(c->custom_images, c->n_custom_images);
    free_caps(c->per_image_caps, c->n_image_caps);
    memset(c, 0, sizeof(*c));
}

static void set_str(char **slot, const char *v)
{
    char *old = *slot;
    *slot = v ? cella_strdup(v) : NULL;
    cella_free(old);
}

bool config_is_preset(const char *name)
{
    return name && (!strcmp(name, "python") || !strcmp(name, "node") || !strcmp(name, "shell"));
}

static bool image_name_valid(const char *s)
{
    if (!isalnum((unsigned char)s[0]))
        return false;
    size_t n = 1;
    for (; s[n]; n++)
        if (!isalnum((unsigned char)s[n]) && !strchr("._-", s[n]))
            return false;
    return n <= 64;
}

/* Shared by the reader (which knows the line) and config_validate. */
static const char *custom_image_problem(const char *name, const char *rootfs)
{
    if (!image_name_valid(name))
        return "image names are 1-64 characters of [A-Za-z0-9._-], starting with a letter or digit";
    if (config_is_preset(name))
        return "a preset image name cannot be redefined";
    if (!rootfs || rootfs[0] != '/')
        return "rootfs must be an absolute path";
    return NULL;
}

static int cmp_custom(const void *a, const void *b)
{
    return strcmp(((const cfg_custom_image *)a)->name, ((const cfg_custom_image *)b)->name);
}

static int cmp_caps(const void *a, const void *b)
{
    return strcmp(((const cfg_image_cap *)a)->image, ((const cfg_image_cap *)b)->image);
}

/* ---- YAML ---------------------------------------------------------------- */

typedef struct yctx {
    yaml_document_t *doc;
    const char *origin;
    cella_err *err;
} yctx;

static int yfail(const yctx *y, const yaml_node_t *n, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* "origin:line: key: message" */
static int yfail(const yctx *y, const yaml_node_t *n, const char *key, const char *fmt, ...)
{
    char msg[CELLA_ERR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    size_t line = n->start_mark.line + 1;
    if (key)
        return cella_err_set(y->err, 0, "%s:%zu: %s: %s", y->origin, line, key, msg);
    return cella_err_set(y->err, 0, "%s:%zu: %s", y->origin, line, msg);
}

static int parser_fail(const yaml_parser_t *p, const char *origin, cella_err *err)
{
    const char *problem = p->problem ? p->problem : "malformed YAML";
    switch (p->error) {
    case YAML_MEMORY_ERROR:
        return cella_err_set(err, ENOMEM, "%s: parsing YAML", origin);
    case YAML_READER_ERROR:
        return cella_err_set(err, 0, "%s: byte %zu: %s", origin, p->problem_offset, problem);
    default:
        if (p->context)
            return cella_err_set(err, 0, "%s:%zu: %s (%s that starts on line %zu)", origin,
                                 p->problem_mark.line + 1, problem, p->context,
                                 p->context_mark.line + 1);
        return cella_err_set(err, 0, "%s:%zu: %s", origin, p->problem_mark.line + 1, problem);
    }
}

/* The document loader has no depth limit of its own, so one pass over the
 * events bounds nesting (and the number of documents) before it runs. */
static int yaml_precheck(const char *text, size_t len, const char *origin, cella_err *err)
{
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p))
        return cella_err_set(err, ENOMEM, "%s: parsing YAML", origin);
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    int depth = 0, docs = 0, rc = 0;
    for (;;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev)) {
            rc = parser_fail(&p, origin, err);
            break;
        }
        yaml_event_type_t type = ev.type;
        size_t line = ev.start_mark.line + 1;
        yaml_event_delete(&ev);
        if (type == YAML_STREAM_END_EVENT)
            break;
        if (type == YAML_DOCUMENT_START_EVENT && ++docs > 1) {
            rc = cella_err_set(err, 0, "%s:%zu: a second YAML document; the file holds one",
                               origin, line);
            break;
        }
        if (type == YAML_SEQUENCE_START_EVENT || type == YAML_MAPPING_START_EVENT) {
            if (++depth > YAML_MAX_DEPTH) {
                rc = cella_err_set(err, 0, "%s:%zu: nested more than %d levels deep", origin,
                                   line, YAML_MAX_DEPTH);
                break;
            }
        } else if (type == YAML_SEQUENCE_END_EVENT || type == YAML_MAPPING_END_EVENT) {
            depth--;
        }
    }
    yaml_parser_delete(&p);
    return rc;
}

static bool is_null(const yaml_node_t *n)
{
    if (!n || n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return false;
    const char *s = (const char *)n->data.scalar.value;
    return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
           !strcmp(s, "NULL");
}

static const char *node_kind(const yaml_node_t *n)
{
    return n->type == YAML_SEQUENCE_NODE ? "a list" : n->type == YAML_MAPPING_NODE ? "a mapping"
                                                                                  : "a value";
}

/* The text of a scalar that must be present; NULL (with err set) otherwise. */
static const char *want_scalar(const yctx *y, const yaml_node_t *n, const char *key)
{
    if (n->type != YAML_SCALAR_NODE) {
        yfail(y, n, key, "expected a single value, found %s", node_kind(n));
        return NULL;
    }
    if (is_null(n)) {
        yfail(y, n, key, "has no value");
        return NULL;
    }
    const char *s = (const char *)n->data.scalar.value;
    if (strlen(s) != n->data.scalar.length) {
        yfail(y, n, key, "contains a NUL character");
        return NULL;
    }
    return s;
}

static bool want_type(const yctx *y, const yaml_node_t *n, const char *key, yaml_node_type_t t)
{
    if (n->type == t)
        return true;
    yfail(y, n, key, "expected %s, found %s",
          t == YAML_SEQUENCE_NODE ? "a list" : t == YAML_MAPPING_NODE ? "a mapping" : "a value",
          node_kind(n));
    return false;
}

static const yaml_node_t *node_at(const yctx *y, int idx)
{
    return yaml_document_get_node(y->doc, idx);
}

static int get_u64(const yctx *y, const yaml_node_t *n, const char *key, uint64_t min,
                   uint64_t max, uint64_t *out)
{
    const char *s = want_scalar(y, n, key);
    if (!s)
        return -1;
    cella_err e;
    if (parse_u64(s, min, max, out, &e) < 0)
        return yfail(y, n, key, "%s", e.msg);
    return 0;
}

static int get_cpus(const yctx *y, const yaml_node_t *n, const char *key, bool zero_ok,
                    uint32_t *out)
{
    const char *s = want_scalar(y, n, key);
    if (!s)
        return -1;
    uint64_t zero;
    if (zero_ok && parse_u64(s, 0, 0, &zero, NULL) == 0) {
        *out = 0;
        return 0;
    }
    cella_err e;
    if (parse_cpus_milli(s, MAX_CPUS_MILLI, out, &e) < 0)
        return yfail(y, n, key, "%s", e.msg);
    return 0;
}

/* A sequence of strings into *slot (NULL for a null node). */
static int set_strv(const yctx *y, const yaml_node_t *n, const char *key, char ***slot)
{
    if (is_null(n)) {
        cella_strv_free(*slot);
        *slot = NULL;
        return 0;
    }
    if (!want_type(y, n, key, YAML_SEQUENCE_NODE))
        return -1;
    size_t cnt = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    char **v = cella_calloc(cnt + 1, sizeof(*v));
    size_t i = 0;
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
         it++) {
        const char *s = want_scalar(y, node_at(y, *it), key);
        if (!s) {
            cella_strv_free(v);
            return -1;
        }
        v[i++] = cella_strdup(s);
    }
    cella_strv_free(*slot);
    *slot = v;
    return 0;
}

static int set_allowlist(const yctx *y, const yaml_node_t *n, cella_config *c)
{
    /* As serde reads `image_allowlist:` (null): not set. */
    if (set_strv(y, n, "image_allowlist", &c->image_allowlist) < 0)
        return -1;
    c->allowlist_set = c->image_allowlist != NULL;
    return 0;
}

static int set_custom_images(const yctx *y, const yaml_node_t *n, cella_config *c)
{
    const char *key = "custom_images";
    cfg_custom_image *v = NULL;
    size_t cnt = 0;
    if (!is_null(n)) {
        if (!want_type(y, n, key, YAML_MAPPING_NODE))
            return -1;
        size_t cap = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
        v = cella_calloc(cap ? cap : 1, sizeof(*v));
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
             p++) {
            const yaml_node_t *kn = node_at(y, p->key), *vn = node_at(y, p->value);
            const char *name = want_scalar(y, kn, key);
            char path[96];
            const char *rootfs = NULL, *problem = NULL;
            if (name) {
                snprintf(path, sizeof(path), "%s.%.64s", key, name);
                rootfs = want_scalar(y, vn, path);
            }
            if (rootfs && !(problem = custom_image_problem(name, rootfs))) {
                v[cnt].name = cella_strdup(name);
                v[cnt].rootfs = cella_strdup(rootfs);
                cnt++;
                continue;
            }
            if (problem)
                yfail(y, kn, path, "%s", problem);
            free_custom(v, cnt);
            return -1;
        }
        qsort(v, cnt, sizeof(*v), cmp_custom);
        for (size_t i = 1; i < cnt; i++)
            if (!strcmp(v[i - 1].name, v[i].name)) {
                yfail(y, n, key, "'%s' is defined twice", v[i].name);
                free_custom(v, cnt);
                return -1;
            }
    }
    free_custom(c->custom_images, c->n_custom_images);
    c->custom_images = v;
    c->n_custom_images = cnt;
    return 0;
}

static int read_cap(const yctx *y, const yaml_node_t *n, const char *path, cfg_image_cap *cap)
{
    if (is_null(n))
        return 0;
    if (!want_type(y, n, path, YAML_MAPPING_NODE))
        return -1;
    bool seen_cpus = false, seen_mem = false;
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        const yaml_node_t *kn = node_at(y, p->key), *vn = node_at(y, p->value);
        const char *k = want_scalar(y, kn, path);
        if (!k)
            return -1;
        char sub[128];
        snprintf(sub, sizeof(sub), "%s.%s", path, k);
        if (!strcmp(k, "max_cpus")) {
            if (seen_cpus)
                return yfail(y, kn, sub, "set twice");
            seen_cpus = true;
            if (get_cpus(y, vn, sub, true, &cap->max_cpus_milli) < 0)
                return -1;
        } else if (!strcmp(k, "max_memory_mb")) {
            if (seen_mem)
                return yfail(y, kn, sub, "set twice");
            seen_mem = true;
            if (get_u64(y, vn, sub, 0, MAX_MEMORY_MB, &cap->max_memory_mb) < 0)
                return -1;
            if (cap->max_memory_mb && cap->max_memory_mb < MIN_MEMORY_MB)
                return yfail(y, vn, sub, "%llu is below the minimum of %u (0: no cap)",
                             (unsigned long long)cap->max_memory_mb, MIN_MEMORY_MB);
        } else {
            return yfail(y, kn, path, "unknown key '%.64s' (max_cpus, max_memory_mb)", k);
        }
    }
    return 0;
}

static int set_caps(const yctx *y, const yaml_node_t *n, cella_config *c)
{
    const char *key = "per_image_caps";
    cfg_image_cap *v = NULL;
    size_t cnt = 0;
    if (!is_null(n)) {
        if (!want_type(y, n, key, YAML_MAPPING_NODE))
            return -1;
        size_t cap = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
        v = cella_calloc(cap ? cap : 1, sizeof(*v));
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
             p++) {
            const char *image = want_scalar(y, node_at(y, p->key), key);
            char path[96];
            if (image) {
                snprintf(path, sizeof(path), "%s.%.64s", key, image);
                v[cnt].image = cella_strdup(image);
                cnt++;
            }
            if (!image || read_cap(y, node_at(y, p->value), path, &v[cnt - 1]) < 0) {
                free_caps(v, cnt);
                return -1;
            }
        }
        qsort(v, cnt, sizeof(*v), cmp_caps);
        for (size_t i = 1; i < cnt; i++)
            if (!strcmp(v[i - 1].image, v[i].image)) {
                yfail(y, n, key, "'%s' is listed twice", v[i].image);
                free_caps(v, cnt);
                return -1;
            }
    }
    free_caps(c->per_image_caps, c->n_image_caps);
    c->per_image_caps = v;
    c->n_image_caps = cnt;
    return 0;
}

static int apply_field(const yctx *y, const field *f, const yaml_node_t *n, cella_config *c)
{
    void *p = (char *)c + f->off;
    uint64_t v;
    const char *s;
    cella_err e;
    switch (f->kind) {
    case K_OPT_STR:
        if (is_null(n)) {
            set_str(p, NULL);
            return 0;
        }
        /* fall through */
    case K_STR:
        if (!(s = want_scalar(y, n, f->name)))
            return -1;
        set_str(p, s);
        return 0;
    case K_U32:
    case K_U64:
        if (get_u64(y, n, f->name, f->min, f->max, &v) < 0)
            return -1;
        if (f->kind == K_U32)
            *(uint32_t *)p = (uint32_t)v;
        else
            *(uint64_t *)p = v;
        return 0;
    case K_SIZE:
        if (!(s = want_scalar(y, n, f->name)))
            return -1;
        if (parse_size(s, f->max, &v, &e) < 0)
            return yfail(y, n, f->name, "%s", e.msg);
        if (v < f->min)
            return yfail(y, n, f->name, "'%s' is below the minimum of %llu bytes", s,
                         (unsigned long long)f->min);
        *(uint64_t *)p = v;
        return 0;
    case K_CPUS:
        return get_cpus(y, n, f->name, false, p);
    case K_BOOL:
        if (!(s = want_scalar(y, n, f->name)))
            return -1;
        if (!strcasecmp(s, "true") || !strcasecmp(s, "yes"))
            *(bool *)p = true;
        else if (!strcasecmp(s, "false") || !strcasecmp(s, "no"))
            *(bool *)p = false;
        else
            return yfail(y, n, f->name, "'%s' is not true or false", s);
        return 0;
    case K_STRV:
        return set_strv(y, n, f->name, p);
    case K_ALLOWLIST:
        return set_allowlist(y, n, c);
    case K_CUSTOM:
        return set_custom_images(y, n, c);
    case K_CAPS:
        return set_caps(y, n, c);
    }
    return yfail(y, n, f->name, "unhandled field kind");
}

static int apply_fields(const yctx *y, const yaml_node_t *n, cella_config *c)
{
    if (is_null(n))
        return 0;
    if (!want_type(y, n, NULL, YAML_MAPPING_NODE))
        return -1;
    uint64_t seen = 0;
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        const yaml_node_t *kn = node_at(y, p->key);
        const char *k = want_scalar(y, kn, NULL);
        if (!k)
            return -1;
        size_t i = 0;
        while (i < N_FIELDS && strcmp(fields[i].name, k))
            i++;
        if (i == N_FIELDS)
            return yfail(y, kn, NULL, "unknown key '%.64s'", k);
        if (seen & (1ull << i))
            return yfail(y, kn, k, "set twice");
        seen |= 1ull << i;
        if (apply_field(y, &fields[i], node_at(y, p->value), c) < 0)
            return -1;
    }
    return 0;
}

static const yaml_node_t *map_get(const yctx *y, const yaml_node_t *map, const char *key,
                                  const yaml_node_t **key_node)
{
    if (map->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        const yaml_node_t *kn = node_at(y, p->key);
        if (kn->type == YAML_SCALAR_NODE && !strcmp((const char *)kn->data.scalar.value, key)) {
            if (key_node)
                *key_node = kn;
            return node_at(y, p->value);
        }
    }
    return NULL;
}

/* iii's worker list: the one item named iii-sandbox carries our config. The
 * rest of that file belongs to the iii engine and is none of our business. */
static int apply_workers(const yctx *y, const yaml_node_t *seq, cella_config *c)
{
    if (!want_type(y, seq, "workers", YAML_SEQUENCE_NODE))
        return -1;
    const yaml_node_t *found = NULL, *cfg = NULL;
    for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top;
         it++) {
        const yaml_node_t *item = node_at(y, *it);
        const yaml_node_t *name = map_get(y, item, "name", NULL);
        if (!name || name->type != YAML_SCALAR_NODE ||
            strcmp((const char *)name->data.scalar.value, "iii-sandbox"))
            continue;
        if (found)
            return yfail(y, item, "workers", "more than one worker named iii-sandbox");
        found = item;
        cfg = map_get(y, item, "config", NULL);
    }
    if (!found)
        return yfail(y, seq, "workers", "no worker named iii-sandbox");
    return cfg ? apply_fields(y, cfg, c) : 0;
}

static int apply_root(const yctx *y, const yaml_node_t *root, cella_config *c)
{
    if (!root || is_null(root))
        return 0;
    if (root->type == YAML_SEQUENCE_NODE)
        return apply_workers(y, root, c);
    if (!want_type(y, root, NULL, YAML_MAPPING_NODE))
        return -1;
    const yaml_node_t *workers = map_get(y, root, "workers", NULL);
    if (workers)
        return apply_workers(y, workers, c);
    const yaml_node_t *k1 = NULL, *k2 = NULL;
    const yaml_node_t *nest = map_get(y, root, "config", &k1);
    const yaml_node_t *nest2 = map_get(y, root, "sandbox", &k2);
    if (nest && nest2)
        return yfail(y, k2, "sandbox", "both config: and sandbox: are present; use one");
    if (!nest && !nest2)
        return apply_fields(y, root, c);
    const yaml_node_t *kn = k1 ? k1 : k2;
    /* Beside the nesting key only a worker-style name may appear; anything
     * else is more likely a misplaced setting than something to ignore. */
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
         p++) {
        const yaml_node_t *pk = node_at(y, p->key);
        const char *k = want_scalar(y, pk, NULL);
        if (!k)
            return -1;
        if (pk != kn && strcmp(k, "name"))
            return yfail(y, pk, NULL, "unknown key '%.64s' beside %s: (settings go under it)",
                         k, k1 ? "config" : "sandbox");
    }
    return apply_fields(y, nest ? nest : nest2, c);
}

int config_load_yaml(cella_config *c, const char *text, size_t len, const char *origin,
                     cella_err *err)
{
    if (!origin)
        origin = "config";
    if (yaml_precheck(text, len, origin, err) < 0)
        return -1;
    yaml_parser_t p;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&p))
        return cella_err_set(err, ENOMEM, "%s: parsing YAML", origin);
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    if (!yaml_parser_load(&p, &doc)) {
        parser_fail(&p, origin, err);
        yaml_parser_delete(&p);
        return -1;
    }
    yctx y = { .doc = &doc, .origin = origin, .err = err };
    int rc = apply_root(&y, yaml_document_get_root_node(&doc), c);
    yaml_document_delete(&doc);
    yaml_parser_delete(&p);
    return rc;
}

/* Reads a whole small regular file; what is too large is refused, not cut. */
static int read_small_file(const char *path, size_t max, const char *what, int *mode_out,
                           char **out, size_t *len_out, cella_err *err)
{
    _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return cella_err_set(err, errno, "open %s", path);
    struct stat st;
    if (fstat(fd, &st) < 0)
        return cella_err_set(err, errno, "stat %s", path);
    if (!S_ISREG(st.st_mode))
        return cella_err_set(err, 0, "%s: not a regular file", path);
    if (mode_out)
        *mode_out = (int)(st.st_mode & 07777);
    if (st.st_size > (off_t)max)
        return cella_err_set(err, 0, "%s: %s is larger than %zu KiB", path, what, max >> 10);
    char *buf = cella_malloc(max + 1);
    size_t len = 0;
    /* Read one byte past the limit so a file that grew since fstat is caught. */
    while (len <= max) {
        ssize_t r = read(fd, buf + len, max + 1 - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            cella_free(buf);
            return cella_err_set(err, e, "read %s", path);
        }
        if (r == 0)
            break;
        len += (size_t)r;
    }
    if (len > max) {
        cella_free(buf);
        return cella_err_set(err, 0, "%s: %s is larger than %zu KiB", path, what, max >> 10);
    }
    buf[len] = '\0';
    *out = buf;
    *len_out = len;
    return 0;
}

int config_load_file(cella_config *c, const char *path, cella_err *err)
{
    _cleanup_free_ char *text = NULL;
    size_t len;
    if (read_small_file(path, CONFIG_MAX_BYTES, "a config file", NULL, &text, &len, err) < 0)
        return -1;
    set_str(&c->config_file, path);
    return config_load_yaml(c, text, len, path, err);
}

/* ---- environment ----------------------------------------------------------- */

/* Docker's memory forms: digits, then optionally b, k, m, g or t, an `i` and
 * a `b` ("512m", "1g", "1GiB", "64mb"); all units binary, as Docker's are. */
static int parse_docker_mem_mb(const char *s, uint64_t *mb, cella_err *err)
{
    size_t digits = strspn(s, "0123456789");
    char num[24];
    if (digits == 0 || digits >= sizeof(num))
        return cella_err_set(err, 0, "'%s' is not a memory size (e.g. 512m, 1g)", s);
    memcpy(num, s, digits);
    num[digits] = '\0';
    const char *u = s + digits;
    unsigned shift = 0;
    if (*u) {
        const char *units = "bkmgt", *at = strchr(units, tolower((unsigned char)*u));
        if (!at)
            return cella_err_set(err, 0, "'%s': unknown unit (use b, k, m or g)", s);
        shift = 10u * (unsigned)(at - units);
        u++;
        if (shift && (*u == 'i' || *u == 'I'))
            u++;
        if (shift && (*u == 'b' || *u == 'B'))
            u++;
        if (*u)
            return cella_err_set(err, 0, "'%s': unknown unit (use b, k, m or g)", s);
    }
    uint64_t v;
    if (parse_u64(num, 0, UINT64_MAX >> shift, &v, NULL) < 0)
        return cella_err_set(err, 0, "'%s' is too large", s);
    v <<= shift;
    uint64_t m = (v >> 20) + ((v & ((1u << 20) - 1)) != 0);
    if (m < MIN_MEMORY_MB || m > MAX_MEMORY_MB)
        return cella_err_set(err, 0, "'%s' is out of range [%uM, %uG]", s, MIN_MEMORY_MB,
                             MAX_MEMORY_MB >> 10);
    *mb = m;
    return 0;
}

static const char *env_get(const char *(*fn)(const char *), const char *name)
{
    const char *v = fn ? fn(name) : getenv(name);
    return v && *v ? v : NULL;
}

int config_load_env(cella_config *c, const char *(*getenv_fn)(const char *name), cella_err *err)
{
    const char *v;
    /* Refusals first, so a refused environment changes nothing. */
    if ((v = env_get(getenv_fn, "SANDBOX_BACKEND")) && strcmp(v, "docker") && strcmp(v, "cella"))
        return cella_err_set(err, 0,
                             "SANDBOX_BACKEND: '%s' is not supported (cella stands in for "
                             "docker; unset it or use docker or cella)", v);
    if ((v = env_get(getenv_fn, "SANDBOX_GPU_ENABLED"))) {
        if (!strcasecmp(v, "true") || !strcmp(v, "1") || !strcasecmp(v, "yes"))
            return cella_err_set(err, 0, "SANDBOX_GPU_ENABLED: cella has no GPU passthrough yet");
        if (strcasecmp(v, "false") && strcmp(v, "0") && strcasecmp(v, "no"))
            return cella_err_set(err, 0, "SANDBOX_GPU_ENABLED: '%s' is not true or false", v);
    }
    uint64_t idle = 0, mem = 0, sessions = 0;
    cella_err e;
    const char *listen_s = env_get(getenv_fn, "CELLA_LISTEN");
    if (listen_s && config_parse_listen(listen_s, NULL, NULL, &e) < 0)
        return cella_err_set(err, 0, "CELLA_LISTEN: %s", e.msg);
    const char *idle_s = env_get(getenv_fn, "SANDBOX_IDLE_TIMEOUT");
    if (idle_s && parse_u64(idle_s, 1, 31536000, &idle, &e) < 0)
        return cella_err_set(err, 0, "SANDBOX_IDLE_TIMEOUT: %s (seconds)", e.msg);
    const char *mem_s = env_get(getenv_fn, "SANDBOX_MEM_LIMIT");
    if (mem_s && parse_docker_mem_mb(mem_s, &mem, &e) < 0)
        return cella_err_set(err, 0, "SANDBOX_MEM_LIMIT: %s", e.msg);
    const char *sess_s = env_get(getenv_fn, "SANDBOX_MAX_SESSIONS");
    if (sess_s && parse_u64(sess_s, 1, 100000, &sessions, &e) < 0)
        return cella_err_set(err, 0, "SANDBOX_MAX_SESSIONS: %s", e.msg);

    if (listen_s)
        set_str(&c->listen, listen_s);
    if ((v = env_get(getenv_fn, "CELLA_STATE_DIR")))
        set_str(&c->state_dir, v);
    if ((v = env_get(getenv_fn, "CELLA_TOKENS_FILE")))
        set_str(&c->tokens_file, v);
    if ((v = env_get(getenv_fn, "SANDBOX_WORKER_IMAGE")))
        set_str(&c->default_image, v);
    /* The gateway's own variables: its sessions take them, and so do the
     * general defaults they were honoured as before sessions existed. The
     * session ceiling is the sessions' alone: sessions have their own cap,
     * so it must not shrink (or grow) what every other sandbox may use. */
    if (idle_s)
        c->default_idle_timeout_secs = c->gateway_idle_timeout_secs = idle;
    if (mem_s)
        c->default_memory_mb = c->gateway_memory_mb = mem;
    if (sess_s)
        c->gateway_max_sessions = (uint32_t)sessions;
    return 0;
}

/* ---- validation ------------------------------------------------------------ */

static bool image_known(const cella_config *c, const char *name)
{
    if (config_is_preset(name))
        return true;
    for (size_t i = 0; i < c->n_custom_images; i++)
        if (!strcmp(c->custom_images[i].name, name))
            return true;
    return false;
}

int config_validate(const cella_config *c, cella_err *err)
{
    cella_err e;
    if (!c->listen || config_parse_listen(c->listen, NULL, NULL, &e) < 0)
        return cella_err_set(err, 0, "listen: %s", c->listen ? e.msg : "not set");
    for (size_t i = 0; i < N_FIELDS; i++) {
        const field *f = &fields[i];
        const void *p = (const char *)c + f->off;
        uint64_t v;
        if (f->kind == K_U32 || f->kind == K_CPUS)
            v = *(const uint32_t *)p;
        else if (f->kind == K_U64 || f->kind == K_SIZE)
            v = *(const uint64_t *)p;
        else
            continue;
        if (v < f->min || v > f->max)
            return cella_err_set(err, 0, "%s: %llu is out of range [%llu, %llu]%s", f->name,
                                 (unsigned long long)v, (unsigned long long)f->min,
                                 (unsigned long long)f->max,
                                 f->kind == K_CPUS ? " (milli-CPUs)" : "");
    }
    if (c->default_idle_timeout_secs > c->max_idle_timeout_secs)
        return cella_err_set(err, 0,
                             "default_idle_timeout_secs (%llu) is above max_idle_timeout_secs (%llu)",
                             (unsigned long long)c->default_idle_timeout_secs,
                             (unsigned long long)c->max_idle_timeout_secs);
    if (c->default_exec_timeout_ms > c->max_exec_timeout_ms)
        return cella_err_set(err, 0,
                             "default_exec_timeout_ms (%llu) is above max_exec_timeout_ms (%llu)",
                             (unsigned long long)c->default_exec_timeout_ms,
                             (unsigned long long)c->max_exec_timeout_ms);
    for (size_t i = 0; i < c->n_custom_images; i++) {
        const cfg_custom_image *ci = &c->custom_images[i];
        const char *problem = custom_image_problem(ci->name, ci->rootfs);
        if (problem)
            return cella_err_set(err, 0, "custom_images: '%s': %s", ci->name, problem);
        if (i > 0 && !strcmp(c->custom_images[i - 1].name, ci->name))
            return cella_err_set(err, 0, "custom_images: '%s' is defined twice", ci->name);
    }
    for (char **a = c->image_allowlist; a && *a; a++)
        if (!image_known(c, *a))
            return cella_err_set(err, 0,
                                 "image_allowlist: '%s' is neither a preset (python, node, "
                                 "shell) nor in custom_images", *a);
    for (size_t i = 0; i < c->n_image_caps; i++) {
        const cfg_image_cap *cap = &c->per_image_caps[i];
        if (!image_known(c, cap->image))
            return cella_err_set(err, 0, "per_image_caps: '%s' is not a known image",
                                 cap->image);
        if (cap->max_cpus_milli > MAX_CPUS_MILLI ||
            (cap->max_memory_mb && cap->max_memory_mb < MIN_MEMORY_MB) ||
            cap->max_memory_mb > MAX_MEMORY_MB)
            return cella_err_set(err, 0, "per_image_caps: '%s': cap out of range", cap->image);
    }
    if (!c->default_image || !image_known(c, c->default_image))
        return cella_err_set(err, 0, "default_image: '%s' is not a known image",
                             c->default_image ? c->default_image : "");
    return 0;
}

/* ---- listen ---------------------------------------------------------------- */

static bool hostname_valid(const char *h)
{
    size_t n = strlen(h), label = 0;
    if (n == 0 || n > 253)
        return false;
    for (size_t i = 0; i <= n; i++) {
        char ch = h[i];
        if (ch == '.' || ch == '\0') {
            if (label == 0 || h[i - 1] == '-')
                return false;
            label = 0;
        } else if (isalnum((unsigned char)ch) || ch == '-') {
            if (label == 0 && ch == '-')
                return false;
            if (++label > 63)
                return false;
        } else {
            return false;
        }
    }
    return true;
}

int config_parse_listen(const char *s, char **host, uint16_t *port, cella_err *err)
{
    if (!s || !*s)
        return cella_err_set(err, 0, "empty listen address (expected ADDR:PORT)");
    const char *colon;
    _cleanup_free_ char *h = NULL;
    if (s[0] == '[') {
        const char *close = strchr(s, ']');
        if (!close)
            return cella_err_set(err, 0, "'%s': missing ']' after the IPv6 address", s);
        h = cella_strndup(s + 1, (size_t)(close - s - 1));
        unsigned char a6[16];
        if (inet_pton(AF_INET6, h, a6) != 1)
            return cella_err_set(err, 0, "'%s': '%s' is not an IPv6 address", s, h);
        if (close[1] != ':')
            return cella_err_set(err, 0, "'%s': missing port (expected [ADDR]:PORT)", s);
        colon = close + 1;
    } else {
        colon = strrchr(s, ':');
        if (!colon)
            return cella_err_set(err, 0, "'%s': missing port (expected ADDR:PORT)", s);
        h = cella_strndup(s, (size_t)(colon - s));
        if (!*h)
            return cella_err_set(err, 0, "'%s': missing address (e.g. 127.0.0.1:7878)", s);
        if (strchr(h, ':'))
            return cella_err_set(err, 0, "'%s': IPv6 addresses go in brackets, e.g. [::1]:7878",
                                 s);
        unsigned char a4[4];
        if (h[strspn(h, "0123456789.")] == '\0') {
            if (inet_pton(AF_INET, h, a4) != 1)
                return cella_err_set(err, 0, "'%s': '%s' is not an IPv4 address", s, h);
        } else if (!hostname_valid(h)) {
            return cella_err_set(err, 0, "'%s': '%s' is not a valid host name", s, h);
        }
    }
    uint64_t p;
    cella_err e;
    if (!colon[1])
        return cella_err_set(err, 0, "'%s': missing port (expected ADDR:PORT)", s);
    if (parse_u64(colon + 1, 0, 65535, &p, &e) < 0)
        return cella_err_set(err, 0, "'%s': port %s", s, e.msg);
    if (port)
        *port = (uint16_t)p;
    if (host) {
        *host = h;
        h = NULL;
    }
    return 0;
}

/* ---- tokens ---------------------------------------------------------------- */

typedef struct tok_line {
    const char *token;
    size_t line;
} tok_line;

static int cmp_tok_line(const void *a, const void *b)
{
    const tok_line *x = a, *y = b;
    int r = strcmp(x->token, y->token);
    return r ? r : (x->line > y->line) - (x->line < y->line);
}

static bool token_char(char ch)
{
    return isalnum((unsigned char)ch) || (ch && strchr("._~+/=-", ch));
}

static bool tenant_valid(const char *s, size_t n)
{
    if (n == 0 || n > 64)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr("._-", s[i]))
            return false;
    return true;
}

/* Splits a line into up to four space-separated words, stopping at a word
 * that starts a comment. Returns the word count. */
static size_t split_words(const char *s, size_t len, const char *w[4], size_t wl[4])
{
    size_t n = 0, i = 0;
    while (i < len) {
        while (i < len && (s[i] == ' ' || s[i] == '\t'))
            i++;
        if (i == len || s[i] == '#')
            break;
        size_t start = i;
        while (i < len && s[i] != ' ' && s[i] != '\t')
            i++;
        if (n < 4) {
            w[n] = s + start;
            wl[n] = i - start;
        }
        n++;
    }
    return n;
}

/* Token text never appears in a message: it is a secret, and a misplaced
 * field may be one too, so errors point at the line instead. */
static int parse_token_line(const char *s, size_t len, const char *origin, size_t line,
                            cfg_token *out, cella_err *err)
{
    const char *w[4];
    size_t wl[4];
    size_t n = split_words(s, len, w, wl);
    if (n == 0)
        return 1;
    if (memchr(s, '\0', len))
        return cella_err_set(err, 0, "%s:%zu: contains a NUL byte", origin, line);
    if (n < 2)
        return cella_err_set(err, 0, "%s:%zu: expected '<token> <tenant> [admin]'", origin,
                             line);
    if (n > 3)
        return cella_err_set(err, 0, "%s:%zu: too many fields (expected '<token> <tenant> "
                             "[admin]')", origin, line);
    if (wl[0] < TOKEN_MIN_LEN)
        return cella_err_set(err, 0, "%s:%zu: token is shorter than %d characters", origin,
                             line, TOKEN_MIN_LEN);
    for (size_t i = 0; i < wl[0]; i++)
        if (!token_char(w[0][i]))
            return cella_err_set(err, 0, "%s:%zu: token has a character outside "
                                 "[A-Za-z0-9._~+/=-]", origin, line);
    if (!tenant_valid(w[1], wl[1]))
        return cella_err_set(err, 0, "%s:%zu: tenant must be 1-64 characters of "
                             "[A-Za-z0-9._-]", origin, line);
    if (n == 3 && (wl[2] != 5 || memcmp(w[2], "admin", 5)))
        return cella_err_set(err, 0, "%s:%zu: the third field may only be 'admin'", origin,
                             line);
    out->token = cella_strndup(w[0], wl[0]);
    out->tenant = cella_strndup(w[1], wl[1]);
    out->admin = n == 3;
    return 0;
}

int tokens_parse(cfg_tokens *t, const char *text, size_t len, const char *origin, cella_err *err)
{
    if (!origin)
        origin = "tokens";
    cfg_tokens r = { 0 };
    size_t cap = 0, line = 0;
    size_t *lines = NULL;
    for (size_t pos = 0; pos < len;) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len, l = end - pos;
        line++;
        if (l > 0 && text[pos + l - 1] == '\r')
            l--;
        cfg_token tok;
        int rc = parse_token_line(text + pos, l, origin, line, &tok, err);
        pos = end + 1;
        if (rc > 0)
            continue;
        if (rc < 0) {
            cella_free(lines);
            tokens_free(&r);
            memset(t, 0, sizeof(*t));
            return -1;
        }
        if (r.n == cap) {
            cap = cap ? cap * 2 : 8;
            r.v = cella_realloc(r.v, cap * sizeof(*r.v));
            lines = cella_realloc(lines, cap * sizeof(*lines));
        }
        lines[r.n] = line;
        r.v[r.n++] = tok;
    }
    /* Sorted copies find duplicates in n log n; a plain strcmp is fine here,
     * since timing at load time tells an attacker nothing. */
    tok_line *sorted = cella_calloc(r.n ? r.n : 1, sizeof(*sorted));
    for (size_t i = 0; i < r.n; i++)
        sorted[i] = (tok_line){ r.v[i].token, lines[i] };
    qsort(sorted, r.n, sizeof(*sorted), cmp_tok_line);
    int rc = 0;
    for (size_t i = 1; i < r.n && rc == 0; i++)
        if (!strcmp(sorted[i - 1].token, sorted[i].token))
            rc = cella_err_set(err, 0, "%s:%zu: duplicate token (same as line %zu)", origin,
                               sorted[i].line, sorted[i - 1].line);
    cella_free(sorted);
    cella_free(lines);
    if (rc < 0) {
        tokens_free(&r);
        memset(t, 0, sizeof(*t));
        return -1;
    }
    *t = r;
    return 0;
}

int tokens_load_file(cfg_tokens *t, const char *path, cella_err *err)
{
    memset(t, 0, sizeof(*t));
    _cleanup_free_ char *text = NULL;
    size_t len;
    int mode;
    if (read_small_file(path, TOKENS_MAX_BYTES, "a tokens file", &mode, &text, &len, err) < 0)
        return -1;
    if (mode & 077)
        return cella_err_set(err, 0,
                             "%s: mode %04o lets group or others at the tokens (secrets); "
                             "run chmod 600 %s", path, (unsigned)mode, path);
    int rc = tokens_parse(t, text, len, path, err);
    OPENSSL_cleanse(text, len);
    return rc;
}

void tokens_free(cfg_tokens *t)
{
    for (size_t i = 0; i < t->n; i++) {
        OPENSSL_cleanse(t->v[i].token, strlen(t->v[i].token));
        cella_free(t->v[i].token);
        cella_free(t->v[i].tenant);
    }
    cella_free(t->v);
    memset(t, 0, sizeof(*t));
}

/* Both sides go through SHA-256 first so the comparison covers a fixed 32
 * bytes whatever the lengths; every entry is hashed and compared, and the
 * match is picked with a mask rather than a branch. */
const cfg_token *tokens_find(const cfg_tokens *t, const char *token)
{
    if (!t || !token)
        return NULL;
    unsigned char want[SHA256_DIGEST_LENGTH], have[SHA256_DIGEST_LENGTH];
    SHA256((const unsigned char *)token, strlen(token), want);
    uintptr_t found = 0;
    for (size_t i = 0; i < t->n; i++) {
        SHA256((const unsigned char *)t->v[i].token, strlen(t->v[i].token), have);
        uintptr_t mask = (uintptr_t)0 - (uintptr_t)(CRYPTO_memcmp(want, have, sizeof(want)) == 0);
        found |= mask & (uintptr_t)&t->v[i];
    }
    OPENSSL_cleanse(want, sizeof(want));
    OPENSSL_cleanse(have, sizeof(have));
    return (const cfg_token *)found;
}
