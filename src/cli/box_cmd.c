#include "cli/box_cmd.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "box/box.h"
#include "box/run.h"
#include "box/workspace.h"
#include "cli/box_args.h"
#include "util/cleanup.h"
#include "util/fdio.h"
#include "util/log.h"

static void write_result_json(const char *path, const box *b, const box_result *r, cella_err *err)
{
    FILE *f = fopen(path, "we");
    if (!f) {
        cella_err_set(err, errno, "--result-json %s", path);
        log_warn("%s", err->msg);
        return;
    }
    const proto_exit *x = &r->exit;
    char code[16] = "null";
    if (x->exit_code >= 0)
        snprintf(code, sizeof(code), "%d", x->exit_code);
    fprintf(f,
            "{\"sandbox_id\":\"%s\",\"exit_code\":%s,\"signal\":%d,\"timed_out\":%s,"
            "\"oom_killed\":%s,\"stdout_bytes\":%llu,\"stderr_bytes\":%llu,"
            "\"stdout_truncated\":%s,\"stderr_truncated\":%s,\"duration_ms\":%.3f,"
            "\"cpu_user_ms\":%.3f,\"cpu_sys_ms\":%.3f,\"max_rss_kb\":%llu}\n",
            b->id.str, code, x->signal, x->flags & EXIT_TIMED_OUT ? "true" : "false",
            r->oom_killed ? "true" : "false", (unsigned long long)x->stdout_bytes,
            (unsigned long long)x->stderr_bytes,
            x->flags & EXIT_STDOUT_TRUNCATED ? "true" : "false",
            x->flags & EXIT_STDERR_TRUNCATED ? "true" : "false", x->duration_us / 1000.0,
            x->user_us / 1000.0, x->sys_us / 1000.0, (unsigned long long)x->max_rss_kb);
    if (fclose(f) != 0)
        log_warn("--result-json %s: %s", path, strerror(errno));
}

/* What the user learns on stderr beyond the command's own output, and the
 * exit status that goes with it. */
static int conclude(const box_opts *o, const box_result *r)
{
    const proto_exit *x = &r->exit;
    for (int s = 1; s <= 2; s++) {
        bool trunc = x->flags & (s == 1 ? EXIT_STDOUT_TRUNCATED : EXIT_STDERR_TRUNCATED);
        if (trunc)
            log_info("%s truncated: kept %llu of %llu bytes (--output-limit)",
                     s == 1 ? "stdout" : "stderr", (unsigned long long)o->output_limit,
                     (unsigned long long)(s == 1 ? x->stdout_bytes : x->stderr_bytes));
    }
    if (x->flags & EXIT_NOT_STARTED) {
        log_error("%s", x->error);
        return CLI_EXIT_FAILED;
    }
    if (r->oom_killed)
        log_info("out of memory: the kernel killed a process at the %llu MiB limit (--memory-mb)",
                 (unsigned long long)o->memory_mb);
    if (r->cancel_signal)
        return 128 + r->cancel_signal;
    if (r->output_closed)
        return 128 + SIGPIPE;
    if (x->flags & EXIT_TIMED_OUT) {
        log_info("timed out after %llu ms; the command was killed",
                 (unsigned long long)o->timeout_ms);
        return CLI_EXIT_TIMEOUT;
    }
    if (x->signal)
        return 128 + x->signal;
    return x->exit_code;
}

/* Ctrl-C and friends arrive as reads on a descriptor, so a signal cancels
 * the command cleanly instead of killing cella mid-teardown. */
static int cancel_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGHUP);
    sigaddset(set, SIGQUIT);
    if (sigprocmask(SIG_BLOCK, set, NULL) < 0)
        return -1;
    int fd = signalfd(-1, set, SFD_CLOEXEC | SFD_NONBLOCK);
    if (fd < 0)
        sigprocmask(SIG_UNBLOCK, set, NULL);   /* no descriptor: keep the default actions */
    return fd;
}

int cli_box_main(int argc, char **argv)
{
    box_opts o;
    cella_err err = {0};
    if (box_args_parse(argc, argv, &o, &err) < 0) {
        fprintf(stderr, "cella box: %s\nTry 'cella box --help'.\n", err.msg);
        box_opts_free(&o);
        return CLI_EXIT_FAILED;
    }
    if (o.help) {
        fputs(box_usage, stdout);
        box_opts_free(&o);
        return 0;
    }
    /* Notices (timeout, truncation, out of memory) always; -v adds debug. */
    log_set_level(o.verbose ? LOG_DEBUG : LOG_INFO);
    signal(SIGPIPE, SIG_IGN);

    int status = CLI_EXIT_FAILED;
    box_runtime *rt = NULL;
    box *b = NULL;
    char tmp_ws[40] = "";
    _cleanup_close_ int ws_fd = -1;
    sigset_t cancel_set;
    _cleanup_close_ int cancel_fd = cancel_signals(&cancel_set);
    box_runtime_opts ro = {.state_dir = o.state_dir};
    if (box_runtime_open(&ro, &rt, &err) < 0)
        goto out;
    if (o.workspace) {
        ws_fd = open(o.workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (ws_fd < 0) {
            cella_err_set(&err, errno, "--workspace %s", o.workspace);
            goto out;
        }
    } else {
        /* Throwaway workspaces of runs that were SIGKILLed go first. */
        int swept = workspace_sweep_temp(rt);
        if (swept)
            log_debug("removed %d abandoned workspace(s)", swept);
        if (workspace_create_temp(rt, tmp_ws, &ws_fd, &err) < 0) {
            tmp_ws[0] = '\0';
            goto out;
        }
    }
    box_spec spec;
    box_spec_init(&spec);
    spec.image = o.image;
    spec.limits.memory_bytes = o.memory_mb << 20;
    spec.limits.pids_max = o.pids;
    spec.limits.cpu_milli = o.cpu_milli;
    spec.tmp_bytes = o.tmp_mb << 20;
    spec.workspace_dirfd = ws_fd;
    if (box_create(rt, &spec, &b, &err) < 0)
        goto out;
    log_debug("sandbox %s is ready", b->id.str);

    proto_exec req = {
        .argv = o.argv,
        .env = o.env,
        .cwd = (char *)(o.workdir ? o.workdir : ""),
        .timeout_ms = o.timeout_ms,
        .stdout_cap = o.output_limit,
        .stderr_cap = o.output_limit,
    };
    box_io io = {.stdin_fd = fcntl(0, F_GETFD) >= 0 ? 0 : -1, .stdout_fd = 1, .stderr_fd = 2,
                 .cancel_fd = cancel_fd};
    box_result res;
    if (box_run(b, 1, &req, &io, &res, &err) < 0) {
        box_result_free(&res);
        goto out;
    }
    if (o.result_json)
        write_result_json(o.result_json, b, &res, &err);
    status = conclude(&o, &res);
    box_result_free(&res);
out:
    if (status == CLI_EXIT_FAILED && err.msg[0])
        log_error("%s", err.msg);
    box_destroy(b);
    if (tmp_ws[0] && workspace_remove(rt, tmp_ws, &err) < 0)
        log_warn("removing the temporary workspace: %s", err.msg);
    box_runtime_close(rt);
    box_opts_free(&o);
    return status;
}
