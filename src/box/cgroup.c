#include "box/cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/fdio.h"

const char *const cg_ctl_names[CG_NCTL] = {"memory", "pids", "cpu"};

/* Undoes mountinfo's octal escapes (\040 for a space, ...) in place. */
static void unescape_octal(char *s)
{
    char *w = s;
    for (char *r = s; *r;) {
        if (r[0] == '\\' && r[1] >= '0' && r[1] <= '7' && r[2] >= '0' && r[2] <= '7' &&
            r[3] >= '0' && r[3] <= '7') {
            *w++ = (char)((r[1] - '0') << 6 | (r[2] - '0') << 3 | (r[3] - '0'));
            r += 4;
        } else {
            *w++ = *r++;
        }
    }
    *w = '\0';
}

static bool list_has(const char *commalist, const char *word)
{
    size_t wl = strlen(word);
    for (const char *p = commalist; p && *p;) {
        const char *c = strchr(p, ',');
        size_t l = c ? (size_t)(c - p) : strlen(p);
        if (l == wl && !strncmp(p, word, wl))
            return true;
        p = c ? c + 1 : NULL;
    }
    return false;
}

/* mountinfo line:
 *   id parent maj:min root mountpoint opts [optional...] - fstype source superopts */
static void parse_mountinfo_line(char *line, cg_layout *out)
{
    char *field[6] = {0};
    char *save = NULL, *tok = strtok_r(line, " ", &save);
    int i = 0;
    for (; tok && i < 6; tok = strtok_r(NULL, " ", &save))
        field[i++] = tok;
    if (i < 6)
        return;
    while (tok && strcmp(tok, "-"))     /* skip optional fields up to the separator */
        tok = strtok_r(NULL, " ", &save);
    char *fstype = strtok_r(NULL, " ", &save);
    char *source = strtok_r(NULL, " ", &save);
    char *super = strtok_r(NULL, " \n", &save);
    if (!fstype || !source)
        return;
    char *root = field[3], *mnt = field[4];
    unescape_octal(root);
    unescape_octal(mnt);
    if (!strcmp(fstype, "cgroup2")) {
        if (!out->v2_mount) {
            out->v2_mount = cella_strdup(mnt);
            out->v2_root = cella_strdup(root);
        }
    } else if (!strcmp(fstype, "cgroup") && super) {
        for (int c = 0; c < CG_NCTL; c++) {
            if (!out->v1_mount[c] && list_has(super, cg_ctl_names[c])) {
                out->v1_mount[c] = cella_strdup(mnt);
                out->v1_root[c] = cella_strdup(root);
            }
        }
    }
}

/* /proc/self/cgroup line:  hierarchy-id ":" controller-list ":" path */
static void parse_cgroup_line(char *line, cg_layout *out)
{
    char *c1 = strchr(line, ':');
    if (!c1)
        return;
    char *c2 = strchr(c1 + 1, ':');
    if (!c2)
        return;
    *c1 = *c2 = '\0';
    char *ctls = c1 + 1, *path = c2 + 1;
    path[strcspn(path, "\n")] = '\0';
    if (!strcmp(line, "0") && !*ctls) {
        if (!out->v2_self)
            out->v2_self = cella_strdup(path);
        return;
    }
    for (int c = 0; c < CG_NCTL; c++)
        if (!out->v1_self[c] && list_has(ctls, cg_ctl_names[c]))
            out->v1_self[c] = cella_strdup(path);
}

int cg_layout_parse(const char *mountinfo, const char *proc_self_cgroup, cg_layout *out,
                    cella_err *err)
{
    memset(out, 0, sizeof(*out));
    _cleanup_free_ char *mi = cella_strdup(mountinfo);
    char *save = NULL;
    for (char *l = strtok_r(mi, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
        parse_mountinfo_line(l, out);
    _cleanup_free_ char *pc = cella_strdup(proc_self_cgroup);
    save = NULL;
    for (char *l = strtok_r(pc, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
        parse_cgroup_line(l, out);
    if (!out->v2_mount && !out->v1_mount[CG_MEMORY] && !out->v1_mount[CG_PIDS] &&
        !out->v1_mount[CG_CPU])
        return cella_err_set(err, 0, "no cgroup hierarchy is mounted");
    return 0;
}

void cg_layout_free(cg_layout *l)
{
    cella_free(l->v2_mount);
    cella_free(l->v2_root);
    cella_free(l->v2_self);
    for (int c = 0; c < CG_NCTL; c++) {
        cella_free(l->v1_mount[c]);
        cella_free(l->v1_root[c]);
        cella_free(l->v1_self[c]);
    }
    memset(l, 0, sizeof(*l));
}

/* Appends the components of part to out ("/a//b/" -> "/a/b"); out has room. */
static void append_components(char *out, const char *part)
{
    size_t n = strlen(out);
    for (const char *p = part; *p;) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        size_t l = strcspn(p, "/");
        out[n++] = '/';
        memcpy(out + n, p, l);
        n += l;
        p += l;
    }
    out[n] = '\0';
}

char *cg_path_join(const char *mount, const char *mount_root, const char *self, const char *leaf)
{
    const char *rel = self ? self : "/";
    if (mount_root && strcmp(mount_root, "/") != 0) {
        /* The hierarchy is mounted from a sub-cgroup (e.g. inside a cgroup
         * namespace): our path must lie below that root to be reachable. */
        size_t rl = strlen(mount_root);
        if (strncmp(rel, mount_root, rl) != 0 || (rel[rl] && rel[rl] != '/'))
            return NULL;
        rel += rl;
    }
    size_t cap = strlen(mount) + strlen(rel) + (leaf ? strlen(leaf) : 0) + 4;
    char *out = cella_malloc(cap);
    out[0] = '\0';
    append_components(out, mount);
    append_components(out, rel);
    if (leaf)
        append_components(out, leaf);
    if (!out[0])
        strcpy(out, "/");
    return out;
}

static int read_text(const char *path, size_t max, char **out, cella_err *err)
{
    return file_read_str_at(AT_FDCWD, path, max, out, err);
}

bool cg_v2_has_controllers(const char *text)
{
    /* cgroup.controllers: space-separated names on one line */
    for (int c = 0; c < CG_NCTL; c++) {
        bool found = false;
        size_t wl = strlen(cg_ctl_names[c]);
        for (const char *p = text; p && *p;) {
            p += strspn(p, " \n");
            size_t l = strcspn(p, " \n");
            if (l == wl && !strncmp(p, cg_ctl_names[c], wl))
                found = true;
            p += l;
        }
        if (!found)
            return false;
    }
    return true;
}

static bool v2_usable(const cg_layout *l)
{
    if (!l->v2_mount)
        return false;
    _cleanup_free_ char *path = cg_path_join(l->v2_mount, "/", "/", "cgroup.controllers");
    _cleanup_free_ char *text = NULL;
    if (read_text(path, 4096, &text, NULL) < 0)
        return false;
    return cg_v2_has_controllers(text);
}

int cg_host_open(const cg_open_opts *o, cg_host **out, cella_err *err)
{
    _cleanup_free_ char *mi = NULL, *pc = NULL;
    if (read_text("/proc/self/mountinfo", 1 << 20, &mi, err) < 0 ||
        read_text("/proc/self/cgroup", 1 << 16, &pc, err) < 0)
        return -1;
    cg_layout l;
    if (cg_layout_parse(mi, pc, &l, err) < 0)
        return -1;
    cg_host *h = cella_calloc(1, sizeof(*h));
    int rc;
    cg_version v = o->force;
    if (v == CG_AUTO)
        v = v2_usable(&l) ? CG_V2 : CG_V1;
    h->version = v;
    rc = v == CG_V2 ? cg_v2_host_open(&l, o, h, err) : cg_v1_host_open(&l, o, h, err);
    cg_layout_free(&l);
    if (rc < 0) {
        cg_host_free(h);
        return -1;
    }
    *out = h;
    return 0;
}

void cg_host_free(cg_host *h)
{
    if (!h)
        return;
    for (int c = 0; c < CG_NCTL; c++)
        cella_free(h->base[c]);
    cella_free(h);
}

static int ndirs(const cg_host *h)
{
    return h->version == CG_V2 ? 1 : CG_NCTL;
}

/* rmdir of a cgroup answers EBUSY while its last processes are still on
 * their way out. Retries for up to ~2 s; with kill_left, also SIGKILLs what
 * is still listed (a stale cgroup whose owner died). */
static int rmdir_cgroup(const char *dir, bool kill_left, cella_err *err)
{
    if (kill_left) {
        _cleanup_free_ char *kill_path = cella_asprintf("%s/cgroup.kill", dir);
        file_write_str_at(AT_FDCWD, kill_path, "1", NULL);   /* v2 only; v1 lacks the file */
    }
    for (int tries = 0;; tries++) {
        if (rmdir(dir) == 0 || errno == ENOENT)
            return 0;
        if (errno != EBUSY || tries >= 200)
            return cella_err_set(err, errno, "remove cgroup %s", dir);
        if (kill_left) {
            _cleanup_free_ char *procs_path = cella_asprintf("%s/cgroup.procs", dir);
            _cleanup_free_ char *procs = NULL;
            if (file_read_str_at(AT_FDCWD, procs_path, 1 << 16, &procs, NULL) == 0)
                for (char *p = procs; *p;) {
                    char *end;
                    long pid = strtol(p, &end, 10);
                    if (end == p)
                        break;
                    if (pid > 0)
                        kill((pid_t)pid, SIGKILL);
                    p = end + strspn(end, "\n");
                }
        }
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
}

int cg_box_reclaim(cg_host *h, const char *name, cella_err *err)
{
    int rc = 0;
    for (int c = 0; c < ndirs(h); c++) {
        _cleanup_free_ char *dir = cella_asprintf("%s/%s", h->base[c], name);
        if (rmdir_cgroup(dir, true, err) < 0)
            rc = -1;
    }
    return rc;
}

void cg_host_each(cg_host *h, void (*fn)(const char *name, void *arg), void *arg)
{
    /* Names are collected first: fn may remove entries. At most a few
     * hundred sandboxes live at once. */
    char *names[1024];
    size_t n = 0;
    for (int c = 0; c < ndirs(h); c++) {
        DIR *d = opendir(h->base[c]);
        struct dirent *de;
        while (d && (de = readdir(d)) && n < 1024) {
            if (de->d_type != DT_DIR || de->d_name[0] == '.')
                continue;
            bool seen = false;
            for (size_t i = 0; i < n && !seen; i++)
                seen = !strcmp(names[i], de->d_name);
            if (!seen)
                names[n++] = cella_strdup(de->d_name);
        }
        if (d)
            closedir(d);
    }
    for (size_t i = 0; i < n; i++) {
        fn(names[i], arg);
        cella_free(names[i]);
    }
}

int cg_box_create(cg_host *h, const char *name, const cg_limits *lim, bool reclaim, cg_box **out,
                  cella_err *err)
{
    cg_box *b = cella_calloc(1, sizeof(*b));
    b->host = h;
    for (int c = 0; c < CG_NCTL; c++)
        b->dirfd[c] = -1;
    for (int c = 0; c < ndirs(h); c++) {
        b->dir[c] = cella_asprintf("%s/%s", h->base[c], name);
        int rc = mkdir(b->dir[c], 0755);
        if (rc < 0 && errno == EEXIST && reclaim) {
            if (rmdir_cgroup(b->dir[c], true, err) < 0) {
                cella_free(b->dir[c]);
                b->dir[c] = NULL;
                goto error;
            }
            rc = mkdir(b->dir[c], 0755);
        }
        if (rc < 0) {
            cella_err_set(err, errno, "create cgroup %s", b->dir[c]);
            cella_free(b->dir[c]);
            b->dir[c] = NULL;
            goto error;
        }
        b->dirfd[c] = open(b->dir[c], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (b->dirfd[c] < 0) {
            cella_err_set(err, errno, "open cgroup %s", b->dir[c]);
            goto error;
        }
    }
    if (h->limits) {
        int rc = h->version == CG_V2 ? cg_v2_box_limits(b, lim, err) : cg_v1_box_limits(b, lim, err);
        if (rc < 0)
            goto error;
    }
    *out = b;
    return 0;
error:
    cg_box_destroy(b, NULL);
    return -1;
}

int cg_box_set_limits(cg_box *b, const cg_limits *lim, cella_err *err)
{
    cg_host *h = b->host;
    if (!h->limits)
        return 0;
    if (h->version == CG_V2)
        return cg_v2_box_limits(b, lim, err);
    /* v1 keeps memory.limit_in_bytes <= memory.memsw.limit_in_bytes at
     * every step: raising needs memsw first, lowering memory first. */
    if (h->have_memsw) {
        char v[32];
        snprintf(v, sizeof(v), "%llu", (unsigned long long)lim->memory_bytes);
        if (file_write_str_at(b->dirfd[CG_MEMORY], "memory.memsw.limit_in_bytes", v, NULL) < 0 &&
            file_write_str_at(b->dirfd[CG_MEMORY], "memory.limit_in_bytes", v, err) < 0)
            return -1;
    }
    return cg_v1_box_limits(b, lim, err);
}

int cg_box_clone_fd(const cg_box *b)
{
    return b->host->version == CG_V2 ? b->dirfd[0] : -1;
}

int cg_box_attach(cg_box *b, pid_t pid, cella_err *err)
{
    char s[32];
    snprintf(s, sizeof(s), "%d", (int)pid);
    for (int c = 0; c < ndirs(b->host); c++)
        if (file_write_str_at(b->dirfd[c], "cgroup.procs", s, err) < 0)
            return cella_err_prefix(err, "attach pid %d to %s", (int)pid, b->dir[c]);
    return 0;
}

int cg_read_keyed(int dirfd, const char *file, const char *key, uint64_t *out, cella_err *err)
{
    _cleanup_free_ char *text = NULL;
    if (file_read_str_at(dirfd, file, 8192, &text, err) < 0)
        return -1;
    size_t kl = strlen(key);
    for (char *p = text; p && *p;) {
        if (!strncmp(p, key, kl) && p[kl] == ' ') {
            *out = strtoull(p + kl + 1, NULL, 10);
            return 0;
        }
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    *out = 0;       /* older kernels lack the counter: report none seen */
    return 0;
}

int cg_box_oom_kills(cg_box *b, uint64_t *out, cella_err *err)
{
    *out = 0;
    if (!b->host->limits)
        return 0;
    return b->host->version == CG_V2 ? cg_v2_oom_kills(b, out, err) : cg_v1_oom_kills(b, out, err);
}

void cg_box_kill(cg_box *b)
{
    if (b->host->version == CG_V2 && b->dirfd[0] >= 0)
        file_write_str_at(b->dirfd[0], "cgroup.kill", "1", NULL);
}

int cg_box_destroy(cg_box *b, cella_err *err)
{
    if (!b)
        return 0;
    int rc = 0;
    for (int c = 0; c < CG_NCTL; c++) {
        if (b->dirfd[c] >= 0)
            close(b->dirfd[c]);
        if (b->dir[c] && rmdir_cgroup(b->dir[c], false, err) < 0)
            rc = -1;
        cella_free(b->dir[c]);
    }
    cella_free(b);
    return rc;
}
