/* The code worker's seccomp filter: an allowlist, default kill. Unlike a
 * sandbox, which runs unknown programs, the worker is our own code doing
 * one thing (interpreting) over one socket, so everything it does not need
 * is closed: no open, no socket, no fork, no exec, no signals to others.
 * A syscall outside the list kills the whole process (SIGSYS), which the
 * daemon sees as a crashed worker. Each rule says why it is there. */
#include <errno.h>
#include <seccomp.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/code_worker.h"
#include "util/alloc.h"
#include "util/cleanup.h"

static int allow(scmp_filter_ctx ctx, const char *name, unsigned n,
                 const struct scmp_arg_cmp *cmp, cella_err *err)
{
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR)
        return cella_err_set(err, 0, "seccomp: libseccomp does not know syscall %s", name);
    int rc = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, nr, n, cmp);
    if (rc < 0)
        return cella_err_set(err, -rc, "seccomp rule for %s", name);
    return 0;
}

static int rules(scmp_filter_ctx ctx, cella_err *err)
{
    /* The kernel reads an fd as an unsigned int: compare the low 32 bits
     * only, or a high bit set would slip past while the kernel ignores it. */
    const struct scmp_arg_cmp on_sock = {0, SCMP_CMP_MASKED_EQ, 0xffffffffu, CODE_WORKER_FD};
    /* Pages may be made readable and writable, never executable: an exploit
     * in the interpreter cannot turn its heap into code. */
    const struct scmp_arg_cmp no_exec = {2, SCMP_CMP_MASKED_EQ, PROT_EXEC, 0};
    struct {
        const char *name;
        unsigned n;
        const struct scmp_arg_cmp *cmp;
    } list[] = {
        /* Frames from and to the daemon, on the inherited socket only. */
        {"read", 1, &on_sock},
        {"write", 1, &on_sock},
        /* malloc: the heap (brk) and large blocks (mmap/munmap/mremap);
         * free gives pages back with madvise. */
        {"brk", 0, NULL},
        {"mmap", 1, &no_exec},
        {"munmap", 0, NULL},
        {"mremap", 0, NULL},
        {"madvise", 0, NULL},
        /* Guard pages of the interpreter's coroutine stacks (PROT_NONE). */
        {"mprotect", 1, &no_exec},
        /* The interpreter's CPU-time limit (CLOCK_THREAD_CPUTIME_ID is a
         * real syscall; the monotonic clocks are vDSO reads). */
        {"clock_gettime", 0, NULL},
        /* swapcontext saves and restores the signal mask of a coroutine. */
        {"rt_sigprocmask", 0, NULL},
        /* Returning from a signal handler (none is installed; harmless). */
        {"rt_sigreturn", 0, NULL},
        /* glibc's locks (stdio, malloc) wait on futexes if ever contended;
         * a single thread never waits, but the call must not kill it. */
        {"futex", 0, NULL},
        /* The end: the daemon closed the socket, or a fatal error. */
        {"exit_group", 0, NULL},
        {"exit", 0, NULL},
#ifdef CELLA_SANITIZE
        /* Only in the sanitizer build (never shipped): the ASan runtime
         * reports through stderr and reads its own maps when it does. */
        {"write", 0, NULL},
        {"getpid", 0, NULL},
        {"gettid", 0, NULL},
        {"sched_yield", 0, NULL},
        {"sigaltstack", 0, NULL},
        {"rt_sigaction", 0, NULL},
        {"prctl", 0, NULL},
        {"openat", 0, NULL},
        {"close", 0, NULL},
        {"fstat", 0, NULL},
        {"newfstatat", 0, NULL},
        {"getrlimit", 0, NULL},
        {"prlimit64", 0, NULL},
        {"sched_getaffinity", 0, NULL},
        {"tgkill", 0, NULL},
        {"readlink", 0, NULL},
        {"msync", 0, NULL},
#endif
    };
    for (size_t i = 0; i < sizeof(list) / sizeof(list[0]); i++)
        if (allow(ctx, list[i].name, list[i].n, list[i].cmp, err) < 0)
            return -1;
    return 0;
}

int code_seccomp_compile(uint8_t **bpf, size_t *len, cella_err *err)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
    if (!ctx)
        return cella_err_set(err, 0, "seccomp_init failed");
    int rc = -1;
    _cleanup_close_ int mfd = -1;
    /* A foreign ABI (i386 int 0x80) has its own syscall table: kill. x32
     * calls carry bit 30 in their number, which no rule here matches, so
     * the default action kills them too. */
    if (seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS) < 0 ||
        seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0) < 0) {
        cella_err_set(err, 0, "seccomp: setting filter attributes failed");
        goto out;
    }
    if (rules(ctx, err) < 0)
        goto out;
    mfd = memfd_create("cella-code-seccomp", MFD_CLOEXEC);
    if (mfd < 0) {
        cella_err_set(err, errno, "memfd_create");
        goto out;
    }
    int erc = seccomp_export_bpf(ctx, mfd);
    if (erc < 0) {
        cella_err_set(err, -erc, "seccomp_export_bpf");
        goto out;
    }
    off_t n = lseek(mfd, 0, SEEK_CUR);
    if (n <= 0 || n % 8) {
        cella_err_set(err, 0, "seccomp: exported program has odd size %lld", (long long)n);
        goto out;
    }
    uint8_t *prog = cella_malloc((size_t)n);
    if (pread(mfd, prog, (size_t)n, 0) != n) {
        cella_err_set(err, errno, "seccomp: reading the exported program");
        cella_free(prog);
        goto out;
    }
    *bpf = prog;
    *len = (size_t)n;
    rc = 0;
out:
    seccomp_release(ctx);
    return rc;
}
