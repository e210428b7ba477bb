/* cgroup path handling for both versions (pure), and the v2 mechanics
 * (create, start a child inside, kill, remove) on the real cgroup2 mount. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "box/cgroup.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/fdio.h"

/* This development machine: v1 controllers, an empty cgroup2 at /unified. */
static const char hybrid_mountinfo[] =
    "22 27 0:21 / /proc rw,relatime - proc proc rw\n"
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
    "34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
    "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
static const char hybrid_cgroup[] = "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/d9f0\n"
                                    "2:cpuacct:/\n1:cpu:/\n0::/\n";

static void test_layout_hybrid(void **state)
{
    cg_layout l;
    assert_int_equal(cg_layout_parse(hybrid_mountinfo, hybrid_cgroup, &l, NULL), 0);
    assert_string_equal(l.v2_mount, "/sys/fs/cgroup/unified");
    assert_string_equal(l.v2_self, "/");
    assert_string_equal(l.v1_mount[CG_MEMORY], "/sys/fs/cgroup/memory");
    assert_string_equal(l.v1_mount[CG_PIDS], "/sys/fs/cgroup/pids");
    /* "cpu" must not match "cpuacct" or "cpuset". */
    assert_string_equal(l.v1_mount[CG_CPU], "/sys/fs/cgroup/cpu");
    assert_string_equal(l.v1_self[CG_MEMORY], "/process_api/d9f0");
    assert_string_equal(l.v1_self[CG_CPU], "/");
    char *p = cg_path_join(l.v1_mount[CG_MEMORY], l.v1_root[CG_MEMORY], l.v1_self[CG_MEMORY],
                           "cella");
    assert_string_equal(p, "/sys/fs/cgroup/memory/process_api/d9f0/cella");
    cella_free(p);
    cg_layout_free(&l);
}

static void test_layout_comounted_and_escaped(void **state)
{
    const char mi[] =
        "30 25 0:26 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
        "31 25 0:27 / /sys/fs/cgroup/my\\040mem rw - cgroup cgroup rw,memory\n"
        "32 25 0:28 / /sys/fs/cgroup/pids rw shared:9 master:2 - cgroup cgroup rw,pids\n";
    const char cg[] = "5:cpu,cpuacct:/a\n4:memory:/a\n3:pids:/a\n";
    cg_layout l;
    assert_int_equal(cg_layout_parse(mi, cg, &l, NULL), 0);
    assert_string_equal(l.v1_mount[CG_CPU], "/sys/fs/cgroup/cpu,cpuacct");
    assert_string_equal(l.v1_mount[CG_MEMORY], "/sys/fs/cgroup/my mem");
    assert_string_equal(l.v1_mount[CG_PIDS], "/sys/fs/cgroup/pids");   /* optional fields skipped */
    assert_string_equal(l.v1_self[CG_CPU], "/a");
    assert_null(l.v2_mount);
    cg_layout_free(&l);
}

static void test_layout_pure_v2_in_namespace(void **state)
{
    /* Inside a cgroup namespace the hierarchy is mounted from a sub-cgroup. */
    const char mi[] = "40 30 0:30 /ctr /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n";
    const char cg[] = "0::/ctr/app\n";
    cg_layout l;
    assert_int_equal(cg_layout_parse(mi, cg, &l, NULL), 0);
    char *p = cg_path_join(l.v2_mount, l.v2_root, l.v2_self, "cella");
    assert_string_equal(p, "/sys/fs/cgroup/app/cella");
    cella_free(p);
    /* A path outside the mount's root is unreachable. */
    assert_null(cg_path_join(l.v2_mount, l.v2_root, "/other", NULL));
    assert_null(cg_path_join(l.v2_mount, l.v2_root, "/ctrx", NULL));
    cg_layout_free(&l);
}

static void test_layout_nothing_mounted(void **state)
{
    cg_layout l;
    cella_err err;
    assert_int_equal(cg_layout_parse("22 27 0:21 / /proc rw - proc proc rw\n", "0::/\n", &l, &err),
                     -1);
    assert_non_null(strstr(err.msg, "no cgroup"));
    cg_layout_free(&l);
}

static void test_path_join(void **state)
{
    char *p = cg_path_join("/sys/fs/cgroup/", "/", "//a//b/", "/c/");
    assert_string_equal(p, "/sys/fs/cgroup/a/b/c");
    cella_free(p);
    p = cg_path_join("/sys/fs/cgroup", "/", "/", NULL);
    assert_string_equal(p, "/sys/fs/cgroup");
    cella_free(p);
}

static void test_controllers(void **state)
{
    assert_true(cg_v2_has_controllers("cpuset cpu io memory hugetlb pids rdma misc\n"));
    assert_false(cg_v2_has_controllers("hugetlb\n"));
    assert_false(cg_v2_has_controllers("cpuset memory pids\n"));   /* cpuset is not cpu */
    assert_false(cg_v2_has_controllers(""));
}

static void test_read_keyed(void **state)
{
    char dir[] = "/tmp/cella-cg-XXXXXX";
    assert_non_null(mkdtemp(dir));
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    int fd = openat(dfd, "memory.events", O_WRONLY | O_CREAT, 0644);
    const char text[] = "low 0\nhigh 0\nmax 3\noom 2\noom_kill 7\noom_group_kill 0\n";
    assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
    close(fd);
    uint64_t v = 99;
    assert_int_equal(cg_read_keyed(dfd, "memory.events", "oom_kill", &v, NULL), 0);
    assert_int_equal(v, 7);
    assert_int_equal(cg_read_keyed(dfd, "memory.events", "oom", &v, NULL), 0);
    assert_int_equal(v, 2);     /* "oom" is not a prefix match of "oom_kill" */
    assert_int_equal(cg_read_keyed(dfd, "memory.events", "absent", &v, NULL), 0);
    assert_int_equal(v, 0);
    assert_int_equal(cg_read_keyed(dfd, "missing", "x", &v, NULL), -1);
    unlinkat(dfd, "memory.events", 0);
    close(dfd);
    rmdir(dir);
}

/* ---- v2 mechanics on the host's cgroup2 mount ---- */

static bool have_v2(const char **mount)
{
    static const char *cands[] = {"/sys/fs/cgroup/unified", "/sys/fs/cgroup"};
    for (int i = 0; i < 2; i++) {
        char p[128];
        snprintf(p, sizeof(p), "%s/cgroup.procs", cands[i]);
        struct stat st;
        char ctl[128];
        snprintf(ctl, sizeof(ctl), "%s/cgroup.controllers", cands[i]);
        if (stat(p, &st) == 0 && access(ctl, F_OK) == 0) {
            *mount = cands[i];
            return true;
        }
    }
    return false;
}

static void test_v2_mechanics(void **state)
{
    const char *mount = NULL;
    if (geteuid() != 0 || !have_v2(&mount)) {
        print_message("[ SKIPPED  ] needs root and a cgroup2 mount\n");
        skip();
    }
    char parent[64];
    snprintf(parent, sizeof(parent), "/cella-unit-%d", (int)getpid());
    /* Opening for sandboxes requires the three controllers; where this host
     * lacks them on v2 that must fail, with a message that says so. */
    cg_host *h = NULL;
    cella_err err;
    cg_open_opts strict = {.force = CG_V2, .parent = parent, .require_limits = true};
    _cleanup_free_ char *ctls = NULL;
    char ctlpath[128];
    snprintf(ctlpath, sizeof(ctlpath), "%s/cgroup.controllers", mount);
    assert_int_equal(file_read_str_at(AT_FDCWD, ctlpath, 4096, &ctls, NULL), 0);
    if (!cg_v2_has_controllers(ctls)) {
        assert_int_equal(cg_host_open(&strict, &h, &err), -1);
        assert_non_null(strstr(err.msg, "does not offer"));
    }
    cg_open_opts o = {.force = CG_V2, .parent = parent, .require_limits = false};
    assert_int_equal(cg_host_open(&o, &h, &err), 0);
    assert_int_equal(h->version, CG_V2);
    cg_limits lim = {64 << 20, 16, 500};
    cg_box *b;
    assert_int_equal(cg_box_create(h, "box1", &lim, false, &b, &err), 0);
    /* The name is taken: without reclaim that is an error. */
    cg_box *dup;
    assert_int_equal(cg_box_create(h, "box1", &lim, false, &dup, &err), -1);
    assert_true(cg_box_clone_fd(b) >= 0);

    /* A child started directly inside the cgroup. */
    struct clone_args ca = {.flags = CLONE_INTO_CGROUP, .exit_signal = SIGCHLD,
                            .cgroup = (uint64_t)cg_box_clone_fd(b)};
    long pid = syscall(SYS_clone3, &ca, sizeof(ca));
    if (pid == 0) {
        for (;;)
            pause();
    }
    assert_true(pid > 0);
    char p[64], want[128];
    snprintf(p, sizeof(p), "/proc/%ld/cgroup", pid);
    _cleanup_free_ char *cg = NULL;
    assert_int_equal(file_read_str_at(AT_FDCWD, p, 4096, &cg, NULL), 0);
    snprintf(want, sizeof(want), "0::%s/box1\n", parent);
    assert_non_null(strstr(cg, want));

    /* An empty cgroup can go; one with a process cannot (EBUSY), so kill first. */
    cg_box_kill(b);
    int status;
    assert_int_equal(waitpid((pid_t)pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    uint64_t ooms = 1;
    assert_int_equal(cg_box_oom_kills(b, &ooms, NULL), 0);
    assert_int_equal(ooms, 0);
    assert_int_equal(cg_box_destroy(b, &err), 0);
    char dir[128];
    snprintf(dir, sizeof(dir), "%s%s/box1", mount, parent);
    assert_int_equal(access(dir, F_OK), -1);
    snprintf(dir, sizeof(dir), "%s%s", mount, parent);
    assert_int_equal(rmdir(dir), 0);
    cg_host_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout_hybrid),
        cmocka_unit_test(test_layout_comounted_and_escaped),
        cmocka_unit_test(test_layout_pure_v2_in_namespace),
        cmocka_unit_test(test_layout_nothing_mounted),
        cmocka_unit_test(test_path_join),
        cmocka_unit_test(test_controllers),
        cmocka_unit_test(test_read_keyed),
        cmocka_unit_test(test_v2_mechanics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
