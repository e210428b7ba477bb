/* cella-probe: run inside a sandbox, it tries, with harmless arguments,
 * everything DESIGN.md rules 2-5 forbid, and prints one line per check:
 *   ok <check>            the sandbox held
 *   HOLE <check>: <why>   it did not
 * Exit status: 0 when no hole was found, 1 otherwise.
 *
 * Options (all about canaries the test sets up on the host):
 *   --host-port N       a TCP listener on the host's 127.0.0.1
 *   --abstract NAME     an abstract unix socket listening on the host
 *   --absent PATH       a host path that must not be visible (repeatable)
 *   --secret-env NAME   a variable in the host's environment
 *   --host-proc MARK    a string in the command line of a host process
 *   --host-hostname H   the host's hostname
 */

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <linux/kcmp.h>
#include <linux/keyctl.h>
#include <linux/sched.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef AF_ALG
#define AF_ALG 38
#endif

static int holes;

__attribute__((format(printf, 2, 3))) static void report(bool ok, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (ok) {
        printf("ok %s\n", buf);
    } else {
        printf("HOLE %s\n", buf);
        holes++;
    }
    fflush(stdout);
}

/* A syscall that must fail with exactly `want` (the filter's answer). */
static void refused(const char *name, long rc, int want)
{
    int e = errno;
    if (rc >= 0)
        report(false, "%s: succeeded (returned %ld)", name, rc);
    else
        report(e == want, "%s refused%s%s", name, e == want ? "" : ": unexpected errno ",
               e == want ? "" : strerror(e));
}

static void check_denied_syscalls(void)
{
    mkdir("/tmp/probe-mnt", 0755);
    refused("mount", mount("none", "/tmp/probe-mnt", "tmpfs", 0, NULL), EPERM);
    refused("mount cgroup2", mount("cgroup2", "/tmp/probe-mnt", "cgroup2", 0, NULL), EPERM);
    refused("mount cgroup v1", mount("cgroup", "/tmp/probe-mnt", "cgroup", 0, "memory"), EPERM);
    refused("umount2", umount2("/proc", MNT_DETACH), EPERM);
    refused("pivot_root", syscall(SYS_pivot_root, "/tmp", "/tmp"), EPERM);
    refused("chroot", chroot("/tmp"), EPERM);
    refused("unshare(CLONE_NEWUSER)", unshare(CLONE_NEWUSER), EPERM);
    refused("unshare(CLONE_NEWNS)", unshare(CLONE_NEWNS), EPERM);
    refused("unshare(CLONE_NEWNET)", unshare(CLONE_NEWNET), EPERM);
    int nsfd = open("/proc/self/ns/user", O_RDONLY);
    refused("setns", setns(nsfd, 0), EPERM);
    close(nsfd);
    long pid = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
    if (pid == 0)
        _exit(0);
    if (pid > 0)
        waitpid((pid_t)pid, NULL, 0);
    refused("clone(CLONE_NEWUSER)", pid, EPERM);
    struct clone_args ca = {.flags = CLONE_NEWUSER, .exit_signal = SIGCHLD};
    pid = syscall(SYS_clone3, &ca, sizeof(ca));
    if (pid == 0)
        _exit(0);
    refused("clone3", pid, ENOSYS);
    refused("bpf", syscall(SYS_bpf, 0, NULL, 0), EPERM);
    refused("perf_event_open", syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0), EPERM);
    refused("ptrace(TRACEME)", ptrace(PTRACE_TRACEME, 0, NULL, NULL), EPERM);
    char buf[8], src[8] = "x";
    struct iovec l = {buf, sizeof(buf)}, r = {src, sizeof(src)};
    refused("process_vm_readv", process_vm_readv(getpid(), &l, 1, &r, 1, 0), EPERM);
    refused("process_vm_writev", process_vm_writev(getpid(), &l, 1, &r, 1, 0), EPERM);
    refused("kcmp", syscall(SYS_kcmp, getpid(), getpid(), KCMP_FILE, 0, 0), EPERM);
    int pfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
    refused("pidfd_getfd", syscall(SYS_pidfd_getfd, pfd, 0, 0), EPERM);
    close(pfd);
    refused("keyctl", syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0), EPERM);
    refused("add_key", syscall(SYS_add_key, "user", "probe", "x", 1, KEY_SPEC_PROCESS_KEYRING), EPERM);
    refused("request_key", syscall(SYS_request_key, "user", "probe", NULL, 0), EPERM);
    refused("kexec_load", syscall(SYS_kexec_load, 0, 0, NULL, 0), EPERM);
    refused("kexec_file_load", syscall(SYS_kexec_file_load, -1, -1, 0, NULL, 0), EPERM);
    refused("init_module", syscall(SYS_init_module, NULL, 0, ""), EPERM);
    refused("finit_module", syscall(SYS_finit_module, -1, "", 0), EPERM);
    refused("delete_module", syscall(SYS_delete_module, "probe", 0), EPERM);
    refused("userfaultfd", syscall(SYS_userfaultfd, 0), EPERM);
    refused("open_by_handle_at", syscall(SYS_open_by_handle_at, AT_FDCWD, NULL, 0), EPERM);
    refused("name_to_handle_at", syscall(SYS_name_to_handle_at, AT_FDCWD, "/", NULL, NULL, 0), EPERM);
    struct io_uring_params up;
    memset(&up, 0, sizeof(up));
    refused("io_uring_setup", syscall(SYS_io_uring_setup, 1, &up), EPERM);
    refused("io_uring_enter", syscall(SYS_io_uring_enter, -1, 0, 0, 0, NULL, 0), EPERM);
    refused("io_uring_register", syscall(SYS_io_uring_register, -1, 0, NULL, 0), EPERM);
    refused("personality(PER_LINUX32)", personality(PER_LINUX32), EPERM);
    refused("personality(ADDR_NO_RANDOMIZE)", personality(ADDR_NO_RANDOMIZE), EPERM);
    report(personality(0xffffffff) == PER_LINUX, "personality query still answers");
    refused("socket(AF_PACKET)", socket(AF_PACKET, SOCK_RAW, 0), EAFNOSUPPORT);
    refused("socket(AF_ALG)", socket(AF_ALG, SOCK_SEQPACKET, 0), EAFNOSUPPORT);
    refused("socket(AF_VSOCK)", socket(AF_VSOCK, SOCK_STREAM, 0), EAFNOSUPPORT);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    report(s >= 0, "socket(AF_INET) still works");
    close(s);
    refused("move_mount", syscall(SYS_move_mount, -1, "", -1, "", 0), EPERM);
    refused("open_tree", syscall(SYS_open_tree, AT_FDCWD, "/", 0), EPERM);
    refused("fsopen", syscall(SYS_fsopen, "tmpfs", 0), EPERM);
    refused("fsmount", syscall(SYS_fsmount, -1, 0, 0), EPERM);
    refused("fspick", syscall(SYS_fspick, AT_FDCWD, "/", 0), EPERM);
    refused("mount_setattr", syscall(SYS_mount_setattr, -1, "", 0, NULL, 0), EPERM);
    refused("open_tree_attr", syscall(467, AT_FDCWD, "/", 0, NULL, 0), EPERM);
    refused("ioctl(TIOCSTI)", ioctl(0, TIOCSTI, "x"), EPERM);
    refused("syscall newer than the filter", syscall(600), ENOSYS);
    refused("modify_ldt", syscall(SYS_modify_ldt, 0, NULL, 0), EPERM);
    unsigned long aio_ctx = 0;
    refused("io_setup (host-wide AIO pool)", syscall(SYS_io_setup, 1, &aio_ctx), ENOSYS);
    /* ptys come from a host-wide pool: a sandbox gets only a few. */
    int ptys[100], np = 0;
    while (np < 100 && (ptys[np] = open("/dev/ptmx", O_RDWR | O_NOCTTY)) >= 0)
        np++;
    report(np > 0 && np <= 32, "ptys are available but capped (%d)", np);
    while (np > 0)
        close(ptys[--np]);
}

static void check_setid_files(void)
{
    const char *f = "/tmp/probe-setid";
    int fd = open(f, O_WRONLY | O_CREAT | O_TRUNC, 0755);
    close(fd);
    refused("chmod u+s", chmod(f, 04755), EPERM);
    refused("fchmodat g+s", fchmodat(AT_FDCWD, f, 02755, 0), EPERM);
    report(chmod(f, 0700) == 0, "plain chmod still works");
    refused("creating a setuid file", open("/tmp/probe-setid2", O_WRONLY | O_CREAT, 04755), EPERM);
    fd = (int)syscall(SYS_openat, AT_FDCWD, f, O_RDONLY, 04755);   /* mode ignored without O_CREAT */
    report(fd >= 0, "open without O_CREAT ignores the mode argument");
    if (fd >= 0)
        close(fd);
    struct stat st;
    report(stat(f, &st) == 0 && !(st.st_mode & (S_ISUID | S_ISGID)), "no setid bit was set");
}

/* i386 and x32 system calls must kill the process (SIGSYS). */
static void check_foreign_abi(const char *name, int which)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (which == 0) {
            long ret;
            __asm__ volatile("int $0x80" : "=a"(ret) : "a"(20) : "memory");   /* i386 getpid */
        } else {
            syscall(39 | 0x40000000);                                       /* x32 getpid */
        }
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    report(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS, "%s call kills the process%s", name,
           WIFSIGNALED(status) ? "" : " (it returned)");
}

static void check_status_file(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    int seen = 0;
    while (f && fgets(line, sizeof(line), f)) {
        char key[64];
        unsigned long long v;
        if (sscanf(line, "%63[^:]:\t%llx", key, &v) != 2)
            continue;
        if (!strncmp(key, "Cap", 3)) {
            report(v == 0, "%s is empty (%llx)", key, v);
            seen++;
        } else if (!strcmp(key, "NoNewPrivs")) {
            report(v == 1, "NoNewPrivs is set");
            seen++;
        } else if (!strcmp(key, "Seccomp")) {
            report(v == 2, "Seccomp is in filter mode");
            seen++;
        }
    }
    if (f)
        fclose(f);
    report(seen == 7, "status lists 5 capability sets, NoNewPrivs and Seccomp");
}

static void check_identity(const char *secret_env, const char *host_hostname)
{
    report(getuid() == 1000 && geteuid() == 1000, "runs as uid 1000");
    report(getgid() == 1000 && getegid() == 1000, "runs as gid 1000");
    gid_t groups[16];
    int n = getgroups(16, groups);
    /* Root mode sets exactly [1000]. Unprivileged, the kernel forbids
     * setgroups and the caller's own groups remain, which must then be none. */
    report(n == 0 || (n == 1 && groups[0] == 1000), "no supplementary group but 1000 (%d)", n);
    const char *home = getenv("HOME");
    report(home && !strcmp(home, "/workspace"), "HOME is /workspace");
    if (secret_env)
        report(!getenv(secret_env), "host variable %s did not leak", secret_env);
    extern char **environ;
    static const char *const allowed[] = {"PATH=", "HOME=", "USER=", "LOGNAME=", "SHELL=",
                                          "LANG=", "TMPDIR=", "PWD=", "PROBE_"};
    for (char **e = environ; *e; e++) {
        bool ok = false;
        for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
            ok |= !strncmp(*e, allowed[i], strlen(allowed[i]));
        report(ok, "environment entry %.*s is expected", (int)strcspn(*e, "="), *e);
    }
    char hn[256] = "";
    gethostname(hn, sizeof(hn));
    if (host_hostname)
        report(strcmp(hn, host_hostname) != 0, "hostname '%s' is not the host's", hn);
}

static void check_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        int fd = atoi(de->d_name);
        if (fd == dirfd(d))
            continue;
        char path[64], target[256] = "";
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        ssize_t n = readlink(path, target, sizeof(target) - 1);
        if (n > 0)
            target[n] = '\0';
        if (fd > 2)
            report(false, "leaked descriptor %d -> %s", fd, target);
        else
            report(!strncmp(target, "pipe:", 5) || !strcmp(target, "/dev/null"),
                   "descriptor %d is a pipe or /dev/null (%s)", fd, target);
    }
    if (d)
        closedir(d);
}

static void check_host_paths(char **absent, int n)
{
    for (int i = 0; i < n; i++) {
        struct stat st;
        report(lstat(absent[i], &st) < 0, "host path %s is not visible", absent[i]);
    }
    static const char *const never[] = {"/etc/shadow", "/root", "/home", "/sys", "/var/lib",
                                        "/run", "/boot", "/mnt", "/opt", "/srv", "/media"};
    for (size_t i = 0; i < sizeof(never) / sizeof(never[0]); i++) {
        struct stat st;
        report(lstat(never[i], &st) < 0, "%s is absent", never[i]);
    }
    /* /dev holds only the harmless nodes. */
    static const char *const devs[] = {"null", "zero", "full", "random", "urandom", "tty",
                                       "fd", "stdin", "stdout", "stderr", "ptmx", "pts", "shm"};
    DIR *d = opendir("/dev");
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        bool ok = false;
        for (size_t i = 0; i < sizeof(devs) / sizeof(devs[0]); i++)
            ok |= !strcmp(de->d_name, devs[i]);
        report(ok, "/dev/%s is expected", de->d_name);
    }
    if (d)
        closedir(d);
}

static void check_readonly(void)
{
    refused("mkdir in /", mkdir("/probe", 0755), EROFS);
    refused("write into /usr", open("/usr/probe", O_WRONLY | O_CREAT, 0644), EROFS);
    refused("write into /etc", open("/etc/probe", O_WRONLY | O_CREAT, 0644), EROFS);
    int fd = open("/proc/sys/kernel/hostname", O_WRONLY);
    report(fd < 0, "/proc/sys is not writable");
    if (fd >= 0)
        close(fd);
    fd = open("/proc/sysrq-trigger", O_WRONLY);
    report(fd < 0, "/proc/sysrq-trigger is not writable");
    if (fd >= 0)
        close(fd);
    char b[16];
    fd = open("/proc/kcore", O_RDONLY);
    report(fd < 0 || read(fd, b, sizeof(b)) <= 0, "/proc/kcore gives nothing");
    if (fd >= 0)
        close(fd);
    fd = open("/proc/1/environ", O_RDONLY);
    report(fd < 0, "the agent's /proc/1 is out of reach");
    if (fd >= 0)
        close(fd);
    struct statvfs sv;
    report(statvfs("/usr", &sv) == 0 && (sv.f_flag & ST_NOSUID) && (sv.f_flag & ST_RDONLY),
           "/usr is read-only and nosuid");
    report(statvfs("/workspace", &sv) == 0 && (sv.f_flag & ST_NOSUID) && (sv.f_flag & ST_NODEV),
           "/workspace is nosuid and nodev");
    /* Every writable mount is one of the sandbox's own. */
    FILE *f = fopen("/proc/self/mountinfo", "r");
    char line[1024];
    static const char *const rw_ok[] = {"/tmp", "/dev/shm", "/workspace", "/dev/pts", "/proc",
                                        "/dev/null", "/dev/zero", "/dev/full", "/dev/random",
                                        "/dev/urandom", "/dev/tty", "/var/inputs",
                                        "/var/outputs"};
    while (f && fgets(line, sizeof(line), f)) {
        char mnt[512], opts[256];
        if (sscanf(line, "%*s %*s %*s %*s %511s %255s", mnt, opts) != 2)
            continue;
        if (strncmp(opts, "rw", 2) != 0)
            continue;
        bool ok = false;
        for (size_t i = 0; i < sizeof(rw_ok) / sizeof(rw_ok[0]); i++)
            ok |= !strcmp(mnt, rw_ok[i]);
        report(ok, "writable mount %s is the sandbox's own", mnt);
    }
    if (f)
        fclose(f);
}

static void check_network(int host_port, const char *abstract)
{
    if (host_port > 0) {
        int s = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)host_port)};
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        int rc = connect(s, (struct sockaddr *)&a, sizeof(a));
        report(rc < 0, "the host's 127.0.0.1:%d is unreachable", host_port);
        close(s);
    }
    if (abstract) {
        int s = socket(AF_UNIX, SOCK_STREAM, 0);
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        size_t n = strlen(abstract);
        memcpy(a.sun_path + 1, abstract, n);
        int rc = connect(s, (struct sockaddr *)&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n));
        report(rc < 0, "the host's abstract socket @%s is unreachable", abstract);
        close(s);
    }
    struct if_nameindex *ifs = if_nameindex();
    int count = 0;
    bool only_lo = true;
    for (struct if_nameindex *i = ifs; i && i->if_index; i++, count++)
        only_lo &= !strcmp(i->if_name, "lo");
    report(only_lo && count == 1, "the only network interface is lo");
    if (ifs)
        if_freenameindex(ifs);
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    strcpy(ifr.ifr_name, "lo");
    report(ioctl(s, SIOCGIFFLAGS, &ifr) == 0 && (ifr.ifr_flags & IFF_UP), "lo is up");
    close(s);
}

static void check_processes(const char *host_mark)
{
    DIR *d = opendir("/proc");
    struct dirent *de;
    int n = 0;
    while (d && (de = readdir(d))) {
        if (de->d_name[0] < '0' || de->d_name[0] > '9')
            continue;
        n++;
        if (!host_mark || atoi(de->d_name) == getpid())   /* our own argv holds the mark */
            continue;
        char p[300], cmd[4096];
        snprintf(p, sizeof(p), "/proc/%s/cmdline", de->d_name);
        FILE *f = fopen(p, "r");
        size_t len = f ? fread(cmd, 1, sizeof(cmd) - 1, f) : 0;
        if (f)
            fclose(f);
        for (size_t i = 0; i < len; i++)
            if (!cmd[i])
                cmd[i] = ' ';
        cmd[len] = '\0';
        report(!strstr(cmd, host_mark), "process %s is not the host's", de->d_name);
    }
    if (d)
        closedir(d);
    report(n > 0 && n < 10, "only the sandbox's own few processes are visible (%d)", n);
}

int main(int argc, char **argv)
{
    int host_port = 0;
    const char *abstract = NULL, *secret = NULL, *mark = NULL, *hostname = NULL;
    char *absent[64];
    int nabsent = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--host-port"))
            host_port = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--abstract"))
            abstract = argv[i + 1];
        else if (!strcmp(argv[i], "--absent") && nabsent < 64)
            absent[nabsent++] = argv[i + 1];
        else if (!strcmp(argv[i], "--secret-env"))
            secret = argv[i + 1];
        else if (!strcmp(argv[i], "--host-proc"))
            mark = argv[i + 1];
        else if (!strcmp(argv[i], "--host-hostname"))
            hostname = argv[i + 1];
        else {
            fprintf(stderr, "cella-probe: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    check_status_file();
    check_identity(secret, hostname);
    check_fds();
    check_denied_syscalls();
    check_setid_files();
    check_foreign_abi("i386 (int 0x80)", 0);
    check_foreign_abi("x32", 1);
    check_host_paths(absent, nabsent);
    check_readonly();
    check_network(host_port, abstract);
    check_processes(mark);
    printf("%s: %d hole%s\n", holes ? "FAILED" : "PASSED", holes, holes == 1 ? "" : "s");
    return holes ? 1 : 0;
}
