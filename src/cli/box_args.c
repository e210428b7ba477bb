#include "cli/box_args.h"

#include <string.h>

#include "box/box.h"
#include "util/alloc.h"
#include "cli/opts.h"
#include "util/parse.h"

const char box_usage[] =
    "Usage: cella box [OPTIONS] [--] COMMAND [ARG...]\n"
    "\n"
    "Run one command in a fresh sandbox and exit with its exit status. The sandbox\n"
    "gets its own user, PID, mount, network (loopback only), IPC, UTS and cgroup\n"
    "namespaces, a read-only view of the host's /usr, no capabilities, a seccomp\n"
    "filter and cgroup limits; it runs as user `sandbox` (uid 1000) in /workspace.\n"
    "Output is relayed as it comes; stdin is relayed to the command.\n"
    "\n"
    "Options:\n"
    "  --image NAME         image to run (default: host, the only one so far)\n"
    "  --memory-mb N        memory limit in MiB, tmpfs included (default: 512)\n"
    "  --pids N             most processes and threads at once (default: 256)\n"
    "  --cpus N             CPU quota, fractions allowed, e.g. 0.5 (default: 1)\n"
    "  --timeout DUR        kill the command after DUR, e.g. 500ms, 5s, 2m (default: none)\n"
    "  --workspace DIR      bind DIR read-write at /workspace; files written inside stay\n"
    "                       owned by DIR's owner (default: a fresh empty directory,\n"
    "                       removed afterwards)\n"
    "  --workdir DIR        working directory inside (default: /workspace)\n"
    "  -e, --env K=V        set an environment variable (repeatable); the command sees\n"
    "                       only these and a fixed minimal set (PATH, HOME, LANG, ...)\n"
    "  --tmp-mb N           size of /tmp in MiB (default: 64)\n"
    "  --output-limit SIZE  bytes of stdout and of stderr to keep, e.g. 64K, 1M\n"
    "                       (default: 1M); the rest is counted and dropped\n"
    "  --result-json FILE   write the result record (exit code, signal, timed_out,\n"
    "                       oom_killed, byte counts, times) to FILE as JSON\n"
    "  --state-dir DIR      cella's state directory (default: $CELLA_STATE_DIR,\n"
    "                       else /var/lib/cella as root)\n"
    "  -v, --verbose        also print debugging detail\n"
    "  -h, --help           show this help\n"
    "\n"
    "Exit status: the command's own; 124 when it timed out; 128+N when signal N\n"
    "killed it (137 after an out-of-memory kill); 125 when cella itself failed\n"
    "(bad option, sandbox could not start, bad workdir).\n"
    "\n"
    "Examples:\n"
    "  cella box -- python3 -c 'print(6 * 7)'\n"
    "  cella box --memory-mb 128 --timeout 10s --workspace ./proj -- make test\n"
    "  echo hello | cella box -- tr a-z A-Z\n";


static void env_push(box_opts *o, const char *kv)
{
    size_t n = cella_strv_len(o->env);
    o->env = cella_realloc(o->env, (n + 2) * sizeof(char *));
    o->env[n] = cella_strdup(kv);
    o->env[n + 1] = NULL;
}

int box_args_parse(int argc, char **argv, box_opts *o, cella_err *err)
{
    memset(o, 0, sizeof(*o));
    o->image = "host";
    o->memory_mb = BOX_DEFAULT_MEMORY >> 20;
    o->pids = BOX_DEFAULT_PIDS;
    o->cpu_milli = BOX_DEFAULT_CPU_MILLI;
    o->tmp_mb = BOX_DEFAULT_TMP >> 20;
    o->output_limit = BOX_DEFAULT_OUTPUT_LIMIT;
    int i = 0;
    for (; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        uint64_t n;
        if (!strcmp(a, "--")) {
            i++;
            break;
        }
        if (a[0] != '-' || !a[1])
            break;                  /* the command starts here */
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            o->help = true;
            return 0;
        } else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
            o->verbose++;
        } else if (cli_is_opt(a, "--image")) {
            if (cli_need_value(argc, argv, &i, "--image", &v, err) < 0)
                return -1;
            o->image = v;
        } else if (cli_is_opt(a, "--memory-mb")) {
            if (cli_need_value(argc, argv, &i, "--memory-mb", &v, err) < 0 ||
                parse_u64(v, 4, 1 << 20, &o->memory_mb, err) < 0)
                return cella_err_prefix(err, "--memory-mb");
        } else if (cli_is_opt(a, "--pids")) {
            if (cli_need_value(argc, argv, &i, "--pids", &v, err) < 0 ||
                parse_u64(v, 1, 1000000, &n, err) < 0)
                return cella_err_prefix(err, "--pids");
            o->pids = (uint32_t)n;
        } else if (cli_is_opt(a, "--cpus")) {
            if (cli_need_value(argc, argv, &i, "--cpus", &v, err) < 0 ||
                parse_cpus_milli(v, 1024 * 1000, &o->cpu_milli, err) < 0)
                return cella_err_prefix(err, "--cpus");
        } else if (cli_is_opt(a, "--timeout")) {
            if (cli_need_value(argc, argv, &i, "--timeout", &v, err) < 0 ||
                parse_duration_ms(v, BOX_MAX_TIMEOUT_MS, &o->timeout_ms, err) < 0)
                return cella_err_prefix(err, "--timeout");
            if (o->timeout_ms == 0)
                return cella_err_set(err, 0, "--timeout: must be more than zero");
        } else if (cli_is_opt(a, "--tmp-mb")) {
            if (cli_need_value(argc, argv, &i, "--tmp-mb", &v, err) < 0 ||
                parse_u64(v, 1, 1 << 20, &o->tmp_mb, err) < 0)
                return cella_err_prefix(err, "--tmp-mb");
        } else if (cli_is_opt(a, "--output-limit")) {
            if (cli_need_value(argc, argv, &i, "--output-limit", &v, err) < 0 ||
                parse_size(v, 1ull << 30, &o->output_limit, err) < 0)
                return cella_err_prefix(err, "--output-limit");
        } else if (cli_is_opt(a, "--workspace")) {
            if (cli_need_value(argc, argv, &i, "--workspace", &o->workspace, err) < 0)
                return -1;
        } else if (cli_is_opt(a, "--workdir")) {
            if (cli_need_value(argc, argv, &i, "--workdir", &o->workdir, err) < 0)
                return -1;
            if (o->workdir[0] != '/')
                return cella_err_set(err, 0, "--workdir: '%s' is not an absolute path",
                                     o->workdir);
        } else if (cli_is_opt(a, "--result-json")) {
            if (cli_need_value(argc, argv, &i, "--result-json", &o->result_json, err) < 0)
                return -1;
        } else if (cli_is_opt(a, "--state-dir")) {
            if (cli_need_value(argc, argv, &i, "--state-dir", &o->state_dir, err) < 0)
                return -1;
        } else if (!strcmp(a, "-e") || cli_is_opt(a, "--env") || !strncmp(a, "-e", 2)) {
            if (!strncmp(a, "-e", 2) && a[2])
                v = a + 2;
            else if (cli_need_value(argc, argv, &i, "--env", &v, err) < 0)
                return -1;
            if (!env_assignment_valid(v))
                return cella_err_set(err, 0,
                                     "--env: '%s' is not NAME=VALUE with NAME of letters, "
                                     "digits and _",
                                     v);
            env_push(o, v);
        } else {
            return cella_err_set(err, 0, "unknown option '%s'", a);
        }
    }
    if (i >= argc)
        return cella_err_set(err, 0, "no command given");
    if (o->tmp_mb > o->memory_mb)
        return cella_err_set(err, 0, "--tmp-mb (%llu) cannot exceed --memory-mb (%llu): /tmp "
                             "lives in the sandbox's memory",
                             (unsigned long long)o->tmp_mb, (unsigned long long)o->memory_mb);
    o->argv = argv + i;
    return 0;
}

void box_opts_free(box_opts *o)
{
    cella_strv_free(o->env);
    o->env = NULL;
}
