/* Rules: default allow, with a denylist. Every entry says why it exists.
 * An allowlist would break the unknown programs sandboxes exist to run; the
 * denylist is closed against the future by the ENOSYS ceiling in the prologue. */
#include "box/seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/fdio.h"

#ifndef __x86_64__
#error "the seccomp prologue is written for x86_64"
#endif

#define X32_SYSCALL_BIT 0x40000000u

struct deny {
    const char *name;     /* resolved by libseccomp, or NULL to use nr */
    int nr;               /* raw x86_64 number for syscalls newer than libseccomp 2.5.4 */
    int errnum;
};

/* Refused outright (EPERM unless said). */
static const struct deny deny_all[] = {
    /* The mount table is fixed at setup: no mounts, remounts or mount API. */
    {"mount", 0, EPERM}, {"umount2", 0, EPERM}, {"move_mount", 0, EPERM},
    {"open_tree", 0, EPERM}, {"fsopen", 0, EPERM}, {"fsconfig", 0, EPERM},
    {"fsmount", 0, EPERM}, {"fspick", 0, EPERM}, {"mount_setattr", 0, EPERM},
    {NULL, 467 /* open_tree_attr, 6.15 */, EPERM},
    /* The root is fixed: no way to re-root or to escape one. */
    {"pivot_root", 0, EPERM}, {"chroot", 0, EPERM},
    /* No new namespaces (user namespaces are the classic way to reach
     * otherwise-privileged kernel code) and no joining others'. */
    {"unshare", 0, EPERM}, {"setns", 0, EPERM},
    /* clone3 passes its flags in memory, which seccomp cannot read; ENOSYS
     * makes libc fall back to clone(), whose flags are checked below. */
    {"clone3", 0, ENOSYS},
    /* Kernel attack surface with no use inside a sandbox. */
    {"bpf", 0, EPERM}, {"perf_event_open", 0, EPERM}, {"userfaultfd", 0, EPERM},
    {"io_uring_setup", 0, EPERM}, {"io_uring_enter", 0, EPERM},
    {"io_uring_register", 0, EPERM}, {"modify_ldt", 0, EPERM},
    {"lookup_dcookie", 0, EPERM}, {"uselib", 0, EPERM}, {"nfsservctl", 0, EPERM},
    {"_sysctl", 0, EPERM}, {"sysfs", 0, EPERM}, {"vhangup", 0, EPERM},
    /* Reading or writing other processes' memory and descriptors. */
    {"ptrace", 0, EPERM}, {"process_vm_readv", 0, EPERM}, {"process_vm_writev", 0, EPERM},
    {"kcmp", 0, EPERM}, {"pidfd_getfd", 0, EPERM},
    /* The kernel keyring is not namespaced. */
    {"keyctl", 0, EPERM}, {"add_key", 0, EPERM}, {"request_key", 0, EPERM},
    /* Replacing the kernel or loading code into it. */
    {"kexec_load", 0, EPERM}, {"kexec_file_load", 0, EPERM}, {"init_module", 0, EPERM},
    {"finit_module", 0, EPERM}, {"delete_module", 0, EPERM},
    /* File handles bypass the mount tree ("shocker"). */
    {"open_by_handle_at", 0, EPERM}, {"name_to_handle_at", 0, EPERM},
    /* Host-wide state: clocks, swap, accounting, reboot, quotas, kernel log,
     * raw I/O ports. Capabilities already stop these; refusing them here
     * keeps their code paths out of reach entirely. */
    {"settimeofday", 0, EPERM}, {"clock_settime", 0, EPERM}, {"clock_adjtime", 0, EPERM},
    {"adjtimex", 0, EPERM}, {"swapon", 0, EPERM}, {"swapoff", 0, EPERM},
    {"acct", 0, EPERM}, {"reboot", 0, EPERM}, {"quotactl", 0, EPERM},
    {NULL, 443 /* quotactl_fd */, EPERM}, {"syslog", 0, EPERM}, {"iopl", 0, EPERM},
    {"ioperm", 0, EPERM},
    /* Linux AIO draws on one host-wide pool (fs.aio-max-nr) that a single
     * sandbox could exhaust for every database on the host; ENOSYS makes
     * libraries fall back to threads. */
    {"io_setup", 0, ENOSYS}, {"io_destroy", 0, ENOSYS}, {"io_submit", 0, ENOSYS},
    {"io_cancel", 0, ENOSYS}, {"io_getevents", 0, ENOSYS}, {"io_pgetevents", 0, ENOSYS},
    /* fchmodat2 (6.6) takes flags seccomp would have to police separately;
     * ENOSYS sends libc back to fchmodat, which the rules below cover. */
    {NULL, 452 /* fchmodat2 */, ENOSYS},
};

static int add_rule(scmp_filter_ctx ctx, int errnum, int nr, unsigned n,
                    const struct scmp_arg_cmp *cmp, const char *what, cella_err *err)
{
    int rc = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(errnum), nr, n, cmp);
    if (rc < 0)
        return cella_err_set(err, -rc, "seccomp rule for %s", what);
    return 0;
}

static int resolve(const char *name, int *nr, cella_err *err)
{
    *nr = seccomp_syscall_resolve_name(name);
    if (*nr == __NR_SCMP_ERROR)
        return cella_err_set(err, 0, "seccomp: libseccomp does not know syscall %s", name);
    return 0;
}

/* Creating a setuid or setgid file: workspace files live on the host's disk,
 * and one made setuid inside must not become a setuid binary outside. */
static int deny_setid_modes(scmp_filter_ctx ctx, cella_err *err)
{
    static const struct {
        const char *name;
        int flags_arg;   /* index of open flags (mode counts only with O_CREAT/O_TMPFILE), or -1 */
        unsigned mode_arg;
    } calls[] = {
        {"chmod", -1, 1}, {"fchmod", -1, 1}, {"fchmodat", -1, 2}, {"open", 1, 2},
        {"openat", 2, 3}, {"creat", -1, 1}, {"mkdir", -1, 1},     {"mkdirat", -1, 2},
        {"mknod", -1, 1}, {"mknodat", -1, 2},
    };
    static const unsigned bits[] = {S_ISUID, S_ISGID};
    /* O_TMPFILE without O_DIRECTORY's bit, which plain directory opens also set. */
    static const unsigned create_flags[] = {O_CREAT, O_TMPFILE & ~O_DIRECTORY};
    for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
        int nr;
        if (resolve(calls[i].name, &nr, err) < 0)
            return -1;
        for (size_t b = 0; b < 2; b++) {
            struct scmp_arg_cmp c[2] = {{calls[i].mode_arg, SCMP_CMP_MASKED_EQ, bits[b], bits[b]}};
            if (calls[i].flags_arg < 0) {
                if (add_rule(ctx, EPERM, nr, 1, c, calls[i].name, err) < 0)
                    return -1;
                continue;
            }
            /* Without O_CREAT or O_TMPFILE the mode argument is unused and may
             * hold anything; only a creating open is refused. */
            for (size_t f = 0; f < 2; f++) {
                c[1] = (struct scmp_arg_cmp){(unsigned)calls[i].flags_arg, SCMP_CMP_MASKED_EQ,
                                             create_flags[f], create_flags[f]};
                if (add_rule(ctx, EPERM, nr, 2, c, calls[i].name, err) < 0)
                    return -1;
            }
        }
    }
    /* openat2 hides its mode in a struct; ENOSYS sends libc back to openat. */
    int nr;
    if (resolve("openat2", &nr, err) < 0)
        return -1;
    return add_rule(ctx, ENOSYS, nr, 0, NULL, "openat2", err);
}

static int deny_with_args(scmp_filter_ctx ctx, cella_err *err)
{
    int nr;
    /* clone() creating any namespace: the same rule as unshare, another door. */
    if (resolve("clone", &nr, err) < 0)
        return -1;
    static const unsigned long ns_flags[] = {CLONE_NEWNS,  CLONE_NEWCGROUP, CLONE_NEWUTS,
                                             CLONE_NEWIPC, CLONE_NEWUSER,   CLONE_NEWPID,
                                             CLONE_NEWNET};
    for (size_t i = 0; i < sizeof(ns_flags) / sizeof(ns_flags[0]); i++) {
        struct scmp_arg_cmp c = {0, SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]};
        if (add_rule(ctx, EPERM, nr, 1, &c, "clone", err) < 0)
            return -1;
    }
    /* Sockets: only unix, inet, inet6 and netlink. Every other family
     * (packet, alg, vsock, and the rest) is kernel code no sandbox needs. */
    if (resolve("socket", &nr, err) < 0)
        return -1;
    struct scmp_arg_cmp gt = {0, SCMP_CMP_GT, AF_NETLINK, 0};
    if (add_rule(ctx, EAFNOSUPPORT, nr, 1, &gt, "socket", err) < 0)
        return -1;
    for (unsigned fam = 0; fam < AF_NETLINK; fam++) {
        if (fam == AF_UNIX || fam == AF_INET || fam == AF_INET6)
            continue;
        struct scmp_arg_cmp c = {0, SCMP_CMP_EQ, fam, 0};
        if (add_rule(ctx, EAFNOSUPPORT, nr, 1, &c, "socket", err) < 0)
            return -1;
    }
    /* RLIMIT_CORE stays 1 (agent/setup.c): lowering it to 0 would let a
     * crash inside run the host's piped core helper as root again. Reading
     * it (prlimit64 with no new value) stays allowed. The resource is an
     * unsigned int to the kernel: only its low 32 bits are compared, or a
     * high bit set would slip past while the kernel ignores it. */
    if (resolve("setrlimit", &nr, err) < 0)
        return -1;
    struct scmp_arg_cmp core = {0, SCMP_CMP_MASKED_EQ, 0xffffffffu, RLIMIT_CORE};
    if (add_rule(ctx, EPERM, nr, 1, &core, "setrlimit", err) < 0)
        return -1;
    if (resolve("prlimit64", &nr, err) < 0)
        return -1;
    struct scmp_arg_cmp pcore[2] = {{1, SCMP_CMP_MASKED_EQ, 0xffffffffu, RLIMIT_CORE},
                                    {2, SCMP_CMP_NE, 0, 0}};
    if (add_rule(ctx, EPERM, nr, 2, pcore, "prlimit64", err) < 0)
        return -1;
    /* Pushing input into a terminal (TIOCSTI) or console (TIOCLINUX) that
     * may belong to someone outside. */
    if (resolve("ioctl", &nr, err) < 0)
        return -1;
    static const unsigned long tty_cmds[] = {TIOCSTI, TIOCLINUX};
    for (size_t i = 0; i < 2; i++) {
        struct scmp_arg_cmp c = {1, SCMP_CMP_MASKED_EQ, 0xffffffffu, tty_cmds[i]};
        if (add_rule(ctx, EPERM, nr, 1, &c, "ioctl", err) < 0)
            return -1;
    }
    return deny_setid_modes(ctx, err);
}

/* Runs before libseccomp's program; falls through to it for native calls
 * below the ceiling. Jumps are relative, so prepending is safe. */
static const struct sock_filter prologue[] = {
    /* A foreign ABI (i386 via int 0x80 and friends) reaches the kernel with a
     * different syscall table, where none of the rules below apply: kill. */
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
    /* x32 shares the x86_64 arch value but sets bit 30 in the number: kill. */
    BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, X32_SYSCALL_BIT, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
    /* Syscalls newer than this filter: ENOSYS until they have been reviewed. */
    BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, SECCOMP_FIRST_UNKNOWN_NR, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
    /* personality(): only reading it (0xffffffff) or keeping PER_LINUX (0);
     * other personalities change the address-space layout and ABI quirks.
     * Here rather than in libseccomp, which takes one test per argument. */
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_personality, 0, 4),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 2, 0),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0xffffffffu, 1, 0),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
};

int box_seccomp_compile(uint8_t **bpf, size_t *len, cella_err *err)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx)
        return cella_err_set(err, 0, "seccomp_init failed");
    int rc = -1;
    _cleanup_close_ int mfd = -1;
    if (seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS) < 0 ||
        seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0) < 0 ||
        seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2) < 0) {
        cella_err_set(err, 0, "seccomp: setting filter attributes failed");
        goto out;
    }
    for (size_t i = 0; i < sizeof(deny_all) / sizeof(deny_all[0]); i++) {
        int nr = deny_all[i].nr;
        if (deny_all[i].name && resolve(deny_all[i].name, &nr, err) < 0)
            goto out;
        if (add_rule(ctx, deny_all[i].errnum, nr, 0, NULL,
                     deny_all[i].name ? deny_all[i].name : "raw syscall", err) < 0)
            goto out;
    }
    if (deny_with_args(ctx, err) < 0)
        goto out;
    mfd = memfd_create("cella-seccomp", MFD_CLOEXEC);
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
    if (n <= 0 || n % sizeof(struct sock_filter)) {
        cella_err_set(err, 0, "seccomp: exported program has odd size %lld", (long long)n);
        goto out;
    }
    size_t total = sizeof(prologue) + (size_t)n;
    if (total / sizeof(struct sock_filter) > BPF_MAXINSNS) {
        cella_err_set(err, 0, "seccomp: program too long");
        goto out;
    }
    uint8_t *out = cella_malloc(total);
    memcpy(out, prologue, sizeof(prologue));
    if (pread(mfd, out + sizeof(prologue), (size_t)n, 0) != n) {
        cella_err_set(err, errno, "seccomp: reading the exported program");
        cella_free(out);
        goto out;
    }
    *bpf = out;
    *len = total;
    rc = 0;
out:
    seccomp_release(ctx);
    return rc;
}
