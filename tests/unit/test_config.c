#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/config.h"
#include "util/alloc.h"

static int load(cella_config *c, const char *yaml, cella_err *err)
{
    return config_load_yaml(c, yaml, strlen(yaml), "config.yaml", err);
}

/* Loads yaml over fresh defaults and expects failure mentioning each needle. */
static void expect_fail(const char *yaml, const char *needle1, const char *needle2)
{
    cella_config c;
    cella_err err;
    config_init(&c);
    assert_int_equal(load(&c, yaml, &err), -1);
    if (needle1 && !strstr(err.msg, needle1))
        fail_msg("'%s' not in '%s'", needle1, err.msg);
    if (needle2 && !strstr(err.msg, needle2))
        fail_msg("'%s' not in '%s'", needle2, err.msg);
    config_free(&c);
}

static void test_defaults(void **state)
{
    cella_config c;
    cella_err err;
    config_init(&c);
    assert_string_equal(c.listen, CFG_DEFAULT_LISTEN);
    assert_string_equal(c.default_image, "python");
    assert_null(c.state_dir);
    assert_null(c.tokens_file);
    assert_null(c.image_allowlist);
    assert_false(c.allowlist_set);
    assert_int_equal(c.max_concurrent_sandboxes, 32);
    assert_int_equal(c.default_cpus_milli, 1000);
    assert_int_equal(c.default_memory_mb, 512);
    assert_int_equal(c.default_idle_timeout_secs, 300);
    assert_int_equal(c.max_exec_timeout_ms, 3600000);
    assert_int_equal(c.default_exec_timeout_ms, 300000);
    assert_int_equal(c.max_execs_per_sandbox, 4);
    assert_int_equal(c.pool_size, 2);
    assert_int_equal(c.max_body_bytes, 16 << 20);
    assert_int_equal(c.output_limit_bytes, 1 << 20);
    assert_int_equal(c.pids_max, 256);
    assert_int_equal(c.max_connections, 512);
    /* The gateway's sessions: the Code Sandbox's Docker defaults. */
    assert_int_equal(c.gateway_max_sessions, 50);
    assert_int_equal(c.gateway_idle_timeout_secs, 900);
    assert_int_equal(c.gateway_memory_mb, 512);
    assert_int_equal(c.drain_timeout_secs, 600);
    assert_int_equal(config_validate(&c, &err), 0);
    assert_int_equal(load(&c, "", &err), 0);   /* empty document: no change */
    assert_int_equal(load(&c, "# nothing\n---\n", &err), 0);
    assert_int_equal(c.max_concurrent_sandboxes, 32);
    config_free(&c);
    config_free(&c);   /* safe twice */
}

static void test_full_document(void **state)
{
    const char *yaml = "listen: 0.0.0.0:9000\n"
                       "state_dir: /var/lib/cella-test\n"
                       "tokens_file: /etc/cella/tokens\n"
                       "image_allowlist: [python, node, mytool]\n"
                       "custom_images:\n"
                       "  zeta: /srv/rootfs/zeta\n"
                       "  mytool: /srv/rootfs/mytool\n"
                       "  alpha: \"/srv/rootfs/alpha\"\n"
                       "per_image_caps:\n"
                       "  python: {max_cpus: 2, max_memory_mb: 2048}\n"
                       "  node:\n"
                       "    max_cpus: 0.5\n"
                       "max_concurrent_sandboxes: 100\n"
                       "default_cpus: 1.5\n"
                       "default_memory_mb: 1024\n"
                       "default_idle_timeout_secs: 600\n"
                       "auto_install: yes\n"
                       "max_exec_timeout_ms: 7200000\n"
                       "default_exec_timeout_ms: 60000\n"
                       "max_execs_per_sandbox: 8\n"
                       "pool_size: 0\n"
                       "max_body_bytes: 32M\n"
                       "output_limit_bytes: 65536\n"
                       "pids_max: 1024\n"
                       "max_connections: 64\n"
                       "default_image: node\n";
    cella_config c;
    cella_err err;
    config_init(&c);
    assert_int_equal(load(&c, yaml, &err), 0);
    assert_string_equal(c.listen, "0.0.0.0:9000");
    assert_string_equal(c.state_dir, "/var/lib/cella-test");
    assert_string_equal(c.tokens_file, "/etc/cella/tokens");
    assert_true(c.allowlist_set);
    assert_int_equal(cella_strv_len(c.image_allowlist), 3);
    assert_string_equal(c.image_allowlist[2], "mytool");
    assert_int_equal(c.n_custom_images, 3);
    assert_string_equal(c.custom_images[0].name, "alpha");
    assert_string_equal(c.custom_images[0].rootfs, "/srv/rootfs/alpha");
    assert_string_equal(c.custom_images[1].name, "mytool");
    assert_string_equal(c.custom_images[2].name, "zeta");
    assert_int_equal(c.n_image_caps, 2);
    assert_string_equal(c.per_image_caps[0].image, "node");
    assert_int_equal(c.per_image_caps[0].max_cpus_milli, 500);
    assert_int_equal(c.per_image_caps[0].max_memory_mb, 0);
    assert_string_equal(c.per_image_caps[1].image, "python");
    assert_int_equal(c.per_image_caps[1].max_cpus_milli, 2000);
    assert_int_equal(c.per_image_caps[1].max_memory_mb, 2048);
    assert_int_equal(c.max_concurrent_sandboxes, 100);
    assert_int_equal(c.default_cpus_milli, 1500);
    assert_int_equal(c.default_memory_mb, 1024);
    assert_int_equal(c.default_idle_timeout_secs, 600);
    assert_true(c.auto_install);
    assert_int_equal(c.max_exec_timeout_ms, 7200000);
    assert_int_equal(c.default_exec_timeout_ms, 60000);
    assert_int_equal(c.max_execs_per_sandbox, 8);
    assert_int_equal(c.pool_size, 0);
    assert_int_equal(c.max_body_bytes, 32 << 20);
    assert_int_equal(c.output_limit_bytes, 65536);
    assert_int_equal(c.pids_max, 1024);
    assert_int_equal(c.max_connections, 64);
    assert_string_equal(c.default_image, "node");
    assert_int_equal(config_validate(&c, &err), 0);

    /* a second load replaces strings and lists without leaking */
    assert_int_equal(load(&c, "listen: 127.0.0.1:1\nimage_allowlist: [shell]\n"
                              "custom_images: {b: /b}\nstate_dir: ~\n", &err), 0);
    assert_string_equal(c.listen, "127.0.0.1:1");
    assert_null(c.state_dir);
    assert_int_equal(cella_strv_len(c.image_allowlist), 1);
    assert_int_equal(c.n_custom_images, 1);
    config_free(&c);
}

static void test_nested(void **state)
{
    cella_config c;
    cella_err err;
    config_init(&c);
    assert_int_equal(load(&c, "config:\n  max_concurrent_sandboxes: 7\n  pool_size: 1\n", &err),
                     0);
    assert_int_equal(c.max_concurrent_sandboxes, 7);
    assert_int_equal(load(&c, "name: iii-sandbox\nsandbox:\n  pool_size: 3\n", &err), 0);
    assert_int_equal(c.pool_size, 3);
    assert_int_equal(load(&c, "workers:\n"
                              "  - name: other\n    config: {whatever: 1}\n"
                              "  - name: iii-sandbox\n    config:\n      pids_max: 99\n",
                          &err), 0);
    assert_int_equal(c.pids_max, 99);
    assert_int_equal(load(&c, "- name: iii-sandbox\n  config: {pids_max: 98}\n", &err), 0);
    assert_int_equal(c.pids_max, 98);
    config_free(&c);
    expect_fail("workers:\n  - name: other\n", "no worker named iii-sandbox", NULL);
    expect_fail("config:\n  pool_size: 1\nextra: 2\n", "config.yaml:3:", "extra");
    expect_fail("config:\n  bogus: 1\n", "config.yaml:2:", "bogus");
    expect_fail("config: {}\nsandbox: {}\n", "both", NULL);
}

static void test_unknown_key(void **state)
{
    expect_fail("listen: 127.0.0.1:80\n\n# c\nmax_sandboxes: 3\n", "config.yaml:4:",
                "max_sandboxes");
    expect_fail("per_image_caps:\n  python:\n    max_gpus: 1\n", "config.yaml:3:", "max_gpus");
    expect_fail("pool_size: 1\npool_size: 2\n", "config.yaml:2:", "set twice");
}

static void test_wrong_types(void **state)
{
    cella_config c;
    cella_err err;
    config_init(&c);
    assert_int_equal(load(&c, "pool_size: 1\n\n\nmax_concurrent_sandboxes: abc\n", &err), -1);
    assert_string_equal(err.msg, "config.yaml:4: max_concurrent_sandboxes: 'abc' is not a whole number");
    config_free(&c);
    expect_fail("listen: [a, b]\n", "config.yaml:1:", "listen");
    expect_fail("listen:\n", "listen", "no value");
    expect_fail("pids_max: {a: 1}\n", "pids_max", "mapping");
    expect_fail("image_allowlist: python\n", "image_allowlist", "list");
    expect_fail("image_allowlist: [[python]]\n", "image_allowlist", NULL);
    expect_fail("custom_images: [a]\n", "custom_images", "mapping");
    expect_fail("custom_images: {a: [x]}\n", "custom_images.a", NULL);
    expect_fail("custom_images: {a: relative/dir}\n", "custom_images.a", "absolute");
    expect_fail("auto_install: maybe\n", "auto_install", NULL);
    expect_fail("default_cpus: lots\n", "default_cpus", NULL);
    expect_fail("max_body_bytes: 16Q\n", "max_body_bytes", NULL);
    expect_fail("pool_size: -1\n", "pool_size", NULL);
    expect_fail("[unclosed\n", "config.yaml:", NULL);
    expect_fail("a: b: c\n", "config.yaml:1:", NULL);
    expect_fail("- 1\n- 2\n", NULL, NULL);
    expect_fail("a: 1\n---\nb: 2\n", "config.yaml:2:", "second");
    expect_fail("\"x\\0y\": 1\n", "NUL", NULL);
    expect_fail("x: *nope\n", "config.yaml:", NULL);
    /* deep nesting is refused before the loader sees it */
    char deep[200];
    memset(deep, '[', 100);
    memset(deep + 100, ']', 99);
    deep[199] = '\0';
    expect_fail(deep, "nested", NULL);
}

static void test_out_of_range(void **state)
{
    expect_fail("max_concurrent_sandboxes: 0\n", "max_concurrent_sandboxes", "out of range");
    expect_fail("max_concurrent_sandboxes: 100001\n", "max_concurrent_sandboxes", NULL);
    expect_fail("default_cpus: 257\n", "default_cpus", NULL);
    expect_fail("default_cpus: 0\n", "default_cpus", NULL);
    expect_fail("default_memory_mb: 15\n", "default_memory_mb", NULL);
    expect_fail("default_idle_timeout_secs: 31536001\n", "default_idle_timeout_secs", NULL);
    expect_fail("max_exec_timeout_ms: 2592000001\n", "max_exec_timeout_ms", NULL);
    expect_fail("max_execs_per_sandbox: 65\n", "max_execs_per_sandbox", NULL);
    expect_fail("pool_size: 65\n", "pool_size", NULL);
    expect_fail("max_body_bytes: 1023\n", "max_body_bytes", "minimum");
    expect_fail("max_body_bytes: 2G\n", "max_body_bytes", "maximum");
    expect_fail("output_limit_bytes: 0\n", "output_limit_bytes", NULL);
    expect_fail("pids_max: 15\n", "pids_max", NULL);
    expect_fail("max_connections: 7\n", "max_connections", NULL);
    expect_fail("gateway_max_sessions: 0\n", "gateway_max_sessions", NULL);
    expect_fail("gateway_memory_mb: 8\n", "gateway_memory_mb", NULL);
    expect_fail("drain_timeout_secs: -1\n", "drain_timeout_secs", NULL);
    expect_fail("gateway_idle_timeout_secs: 0\n", "gateway_idle_timeout_secs", NULL);
    expect_fail("per_image_caps: {python: {max_memory_mb: 8}}\n", "max_memory_mb", NULL);
}

static void test_allowlist_empty(void **state)
{
    cella_config c;
    cella_err err;
    config_init(&c);
    assert_int_equal(load(&c, "image_allowlist: []\n", &err), 0);
    assert_true(c.allowlist_set);
    assert_non_null(c.image_allowlist);
    assert_null(c.image_allowlist[0]);
    assert_int_equal(config_validate(&c, &err), 0);
    config_free(&c);
}

static void test_caps_fractional(void **state)
{
    cella_config c;
    cella_err err;
    config_init(&c);
    assert_int_equal(load(&c, "per_image_caps:\n  shell:\n    max_cpus: 0.25\n"
                              "    max_memory_mb: 256\n", &err), 0);
    assert_int_equal(c.n_image_caps, 1);
    assert_int_equal(c.per_image_caps[0].max_cpus_milli, 250);
    assert_int_equal(c.per_image_caps[0].max_memory_mb, 256);
    assert_int_equal(config_validate(&c, &err), 0);
    config_free(&c);
}

/* ---- environment ---- */

static const char *const *fake_env;

static const char *fake_getenv(const char *name)
{
    for (const char *const *p = fake_env; p && *p; p += 2)
        if (!strcmp(p[0], name))
            return p[1];
    return NULL;
}

static int env_load(cella_config *c, const char *const *env, cella_err *err)
{
    fake_env = env;
    return config_load_env(c, fake_getenv, err);
}

static void test_env(void **state)
{
    cella_config c;
    cella_err err;
    config_init(&c);
    const char *const e1[] = { "SANDBOX_MEM_LIMIT", "1g", "SANDBOX_IDLE_TIMEOUT", "120",
                               "SANDBOX_MAX_SESSIONS", "9", "SANDBOX_WORKER_IMAGE", "node",
                               "SANDBOX_BACKEND", "docker", "SANDBOX_GPU_ENABLED", "false",
                               "CELLA_LISTEN", "[::1]:8080", "CELLA_STATE_DIR", "/tmp/st",
                               "CELLA_TOKENS_FILE", "", NULL };
    assert_int_equal(env_load(&c, e1, &err), 0);
    assert_int_equal(c.default_memory_mb, 1024);
    assert_int_equal(c.default_idle_timeout_secs, 120);
    /* The session ceiling is the sessions' own: every other sandbox keeps
     * max_concurrent_sandboxes. */
    assert_int_equal(c.max_concurrent_sandboxes, 32);
    /* The gateway's sessions take the gateway's variables too. */
    assert_int_equal(c.gateway_memory_mb, 1024);
    assert_int_equal(c.gateway_idle_timeout_secs, 120);
    assert_int_equal(c.gateway_max_sessions, 9);
    assert_string_equal(c.default_image, "node");
    assert_string_equal(c.listen, "[::1]:8080");
    assert_string_equal(c.state_dir, "/tmp/st");
    assert_null(c.tokens_file);   /* empty counts as unset */

    static const struct { const char *v; uint64_t mb; } mems[] = {
        { "300m", 300 }, { "512M", 512 }, { "1G", 1024 }, { "1048576k", 1024 },
        { "16777216", 16 }, { "16777217", 17 }, { "2GiB", 2048 }, { "64mb", 64 },
    };
    for (size_t i = 0; i < sizeof(mems) / sizeof(mems[0]); i++) {
        const char *const e[] = { "SANDBOX_MEM_LIMIT", mems[i].v, NULL };
        assert_int_equal(env_load(&c, e, &err), 0);
        assert_int_equal(c.default_memory_mb, mems[i].mb);
    }
    const char *bad_mem[] = { "8m", "1x", "m", "-1g", "99999999999999999999g" };
    for (size_t i = 0; i < sizeof(bad_mem) / sizeof(bad_mem[0]); i++) {
        const char *const e[] = { "SANDBOX_MEM_LIMIT", bad_mem[i], NULL };
        assert_int_equal(env_load(&c, e, &err), -1);
        assert_non_null(strstr(err.msg, "SANDBOX_MEM_LIMIT"));
    }

    const char *const gpu[] = { "SANDBOX_GPU_ENABLED", "true", "SANDBOX_MAX_SESSIONS", "3", NULL };
    assert_int_equal(env_load(&c, gpu, &err), -1);
    assert_string_equal(err.msg, "SANDBOX_GPU_ENABLED: cella has no GPU passthrough yet");
    assert_int_equal(c.gateway_max_sessions, 9);   /* refused: nothing changed */
    const char *const gpu1[] = { "SANDBOX_GPU_ENABLED", "1", NULL };
    assert_int_equal(env_load(&c, gpu1, &err), -1);
    const char *const backend[] = { "SANDBOX_BACKEND", "e2b", NULL };
    assert_int_equal(env_load(&c, backend, &err), -1);
    assert_non_null(strstr(err.msg, "SANDBOX_BACKEND"));
    const char *const cella_be[] = { "SANDBOX_BACKEND", "cella", NULL };
    assert_int_equal(env_load(&c, cella_be, &err), 0);
    const char *const bad_listen[] = { "CELLA_LISTEN", "nope", NULL };
    assert_int_equal(env_load(&c, bad_listen, &err), -1);
    assert_non_null(strstr(err.msg, "CELLA_LISTEN"));
    const char *const bad_idle[] = { "SANDBOX_IDLE_TIMEOUT", "5m", NULL };
    assert_int_equal(env_load(&c, bad_idle, &err), -1);
    config_free(&c);
}

/* ---- validation ---- */

static void expect_invalid(const char *yaml, const char *needle)
{
    cella_config c;
    cella_err err;
    config_init(&c);
    assert_int_equal(load(&c, yaml, &err), 0);
    assert_int_equal(config_validate(&c, &err), -1);
    if (!strstr(err.msg, needle))
        fail_msg("'%s' not in '%s'", needle, err.msg);
    config_free(&c);
}

static void test_validate(void **state)
{
    expect_invalid("image_allowlist: [python, ruby]\n", "ruby");
    expect_invalid("per_image_caps: {ruby: {max_cpus: 1}}\n", "ruby");
    expect_invalid("default_image: ruby\n", "default_image");
    expect_invalid("default_exec_timeout_ms: 5000\nmax_exec_timeout_ms: 1000\n",
                   "default_exec_timeout_ms");
    expect_invalid("listen: localhost\n", "listen");
    /* custom image rules hold for structs built outside the reader too */
    expect_fail("custom_images: {python: /srv/py}\n", "custom_images.python", "preset");
    cella_config c;
    cella_err err;
    config_init(&c);
    assert_int_equal(load(&c, "custom_images: {mine: /srv/mine}\nimage_allowlist: [mine]\n"
                              "default_image: mine\n", &err), 0);
    assert_int_equal(config_validate(&c, &err), 0);
    cella_free(c.custom_images[0].name);
    c.custom_images[0].name = cella_strdup("python");
    assert_int_equal(config_validate(&c, &err), -1);
    assert_non_null(strstr(err.msg, "preset"));
    cella_free(c.custom_images[0].name);
    c.custom_images[0].name = cella_strdup("mine");
    cella_free(c.custom_images[0].rootfs);
    c.custom_images[0].rootfs = cella_strdup("srv/mine");
    assert_int_equal(config_validate(&c, &err), -1);
    assert_non_null(strstr(err.msg, "absolute"));
    cella_free(c.custom_images[0].rootfs);
    c.custom_images[0].rootfs = cella_strdup("/srv/mine");
    c.pool_size = 65;   /* as a flag might set it */
    assert_int_equal(config_validate(&c, &err), -1);
    assert_non_null(strstr(err.msg, "pool_size"));
    config_free(&c);
    assert_true(config_is_preset("shell"));
    assert_false(config_is_preset("Python"));
}

static void test_listen(void **state)
{
    char *host = NULL;
    uint16_t port = 0;
    cella_err err;
    assert_int_equal(config_parse_listen("1.2.3.4:80", &host, &port, &err), 0);
    assert_string_equal(host, "1.2.3.4");
    assert_int_equal(port, 80);
    cella_free(host);
    assert_int_equal(config_parse_listen("[::1]:80", &host, &port, &err), 0);
    assert_string_equal(host, "::1");
    assert_int_equal(port, 80);
    cella_free(host);
    assert_int_equal(config_parse_listen("localhost:7878", &host, &port, &err), 0);
    assert_string_equal(host, "localhost");
    cella_free(host);
    assert_int_equal(config_parse_listen("sandbox.internal:0", &host, &port, &err), 0);
    assert_int_equal(port, 0);
    cella_free(host);
    assert_int_equal(config_parse_listen("1.2.3.4:65536", &host, &port, &err), -1);
    assert_non_null(strstr(err.msg, "port"));
    assert_int_equal(config_parse_listen("1.2.3.4:http", &host, &port, &err), -1);
    assert_int_equal(config_parse_listen("1.2.3.4", &host, &port, &err), -1);
    assert_non_null(strstr(err.msg, "missing port"));
    assert_int_equal(config_parse_listen("1.2.3.4:", &host, &port, &err), -1);
    assert_int_equal(config_parse_listen("[::1]", &host, &port, &err), -1);
    assert_int_equal(config_parse_listen("::1:80", &host, &port, &err), -1);
    assert_int_equal(config_parse_listen("[zz]:80", &host, &port, &err), -1);
    assert_int_equal(config_parse_listen("999.1.1.1:80", &host, &port, &err), -1);
    assert_int_equal(config_parse_listen("bad_host:80", &host, &port, &err), -1);
    assert_int_equal(config_parse_listen(":80", &host, &port, &err), -1);
    assert_int_equal(config_parse_listen("", &host, &port, &err), -1);
}

/* ---- tokens ---- */

#define TOK_A "abcdefghijklmnop0123"
#define TOK_B "Zm9vYmFyYmF6cXV4-._~+/="

static int tparse(cfg_tokens *t, const char *text, cella_err *err)
{
    return tokens_parse(t, text, strlen(text), "tokens", err);
}

static void test_tokens_parse(void **state)
{
    cfg_tokens t;
    cella_err err;
    assert_int_equal(tparse(&t, "# tokens\n\n" TOK_A " alice\r\n  " TOK_B "\tops admin # root\n",
                            &err), 0);
    assert_int_equal(t.n, 2);
    assert_string_equal(t.v[0].token, TOK_A);
    assert_string_equal(t.v[0].tenant, "alice");
    assert_false(t.v[0].admin);
    assert_string_equal(t.v[1].tenant, "ops");
    assert_true(t.v[1].admin);

    const cfg_token *hit = tokens_find(&t, TOK_B);
    assert_non_null(hit);
    assert_ptr_equal(hit, &t.v[1]);
    assert_ptr_equal(tokens_find(&t, TOK_A), &t.v[0]);
    assert_null(tokens_find(&t, TOK_A "x"));
    assert_null(tokens_find(&t, "abcdefghijklmno"));
    assert_null(tokens_find(&t, ""));
    assert_null(tokens_find(&t, NULL));
    tokens_free(&t);
    tokens_free(&t);
    assert_null(tokens_find(&t, TOK_A));

    assert_int_equal(tparse(&t, "", &err), 0);
    assert_int_equal(t.n, 0);
    tokens_free(&t);
}

static void expect_tokens_fail(const char *text, const char *needle, const char *secret)
{
    cfg_tokens t;
    cella_err err;
    assert_int_equal(tparse(&t, text, &err), -1);
    assert_int_equal(t.n, 0);
    assert_null(t.v);
    if (!strstr(err.msg, needle))
        fail_msg("'%s' not in '%s'", needle, err.msg);
    if (secret && strstr(err.msg, secret))
        fail_msg("secret leaked in '%s'", err.msg);
}

static void test_tokens_errors(void **state)
{
    expect_tokens_fail(TOK_A " alice\n# x\ns3cr3t bob\n", "tokens:3:", "s3cr3t");
    expect_tokens_fail(TOK_A " bad/tenant\n", "tokens:1:", TOK_A);
    expect_tokens_fail(TOK_A "\n", "tokens:1:", TOK_A);
    expect_tokens_fail(TOK_A " alice root\n", "tokens:1:", TOK_A);
    expect_tokens_fail(TOK_A " alice admin extra\n", "too many", TOK_A);
    expect_tokens_fail("abcdefghijklmnop!@ alice\n", "tokens:1:", "abcdefghijklmnop");
    expect_tokens_fail(TOK_B " bob\n" TOK_A " alice\n\n" TOK_A " carol\n", "tokens:4:", TOK_A);
    expect_tokens_fail(TOK_B " bob\n" TOK_A " alice\n\n" TOK_A " carol\n", "line 2", NULL);
    /* a tenant typed first must not end up in the message either */
    expect_tokens_fail("alice " TOK_A "\n", "tokens:1:", TOK_A);
    char tenant65[80];
    memset(tenant65, 't', 65);
    tenant65[65] = '\0';
    char line[160];
    snprintf(line, sizeof(line), TOK_A " %s\n", tenant65);
    expect_tokens_fail(line, "tenant", TOK_A);
}

static void test_tokens_file(void **state)
{
    char path[] = "/tmp/cella-test-tokens-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *text = TOK_A " alice admin\n";
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    cfg_tokens t;
    cella_err err;
    assert_int_equal(chmod(path, 0644), 0);
    assert_int_equal(tokens_load_file(&t, path, &err), -1);
    assert_non_null(strstr(err.msg, "chmod 600"));
    assert_int_equal(chmod(path, 0600), 0);
    assert_int_equal(tokens_load_file(&t, path, &err), 0);
    assert_int_equal(t.n, 1);
    assert_true(t.v[0].admin);
    tokens_free(&t);
    unlink(path);
    assert_int_equal(tokens_load_file(&t, path, &err), -1);
    assert_int_equal(tokens_load_file(&t, "/tmp", &err), -1);
}

static void test_config_file(void **state)
{
    char path[] = "/tmp/cella-test-config-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *text = "pool_size: 5\n";
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    cella_config c;
    cella_err err;
    config_init(&c);
    assert_int_equal(config_load_file(&c, path, &err), 0);
    assert_int_equal(c.pool_size, 5);
    assert_string_equal(c.config_file, path);
    /* grow it past the limit */
    assert_int_equal(ftruncate(fd, (1 << 20) + 1), 0);
    close(fd);
    assert_int_equal(config_load_file(&c, path, &err), -1);
    assert_non_null(strstr(err.msg, "larger"));
    unlink(path);
    assert_int_equal(config_load_file(&c, path, &err), -1);
    config_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),        cmocka_unit_test(test_full_document),
        cmocka_unit_test(test_nested),          cmocka_unit_test(test_unknown_key),
        cmocka_unit_test(test_wrong_types),     cmocka_unit_test(test_out_of_range),
        cmocka_unit_test(test_allowlist_empty), cmocka_unit_test(test_caps_fractional),
        cmocka_unit_test(test_env),             cmocka_unit_test(test_validate),
        cmocka_unit_test(test_listen),          cmocka_unit_test(test_tokens_parse),
        cmocka_unit_test(test_tokens_errors),   cmocka_unit_test(test_tokens_file),
        cmocka_unit_test(test_config_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
