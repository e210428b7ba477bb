/* A path resolved beneath a root directory, following the symlinks on the
 * way as long as they stay beneath it: what openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_MAGICLINKS) does, done by hand, since the sandbox's seccomp
 * filter answers ENOSYS to every openat2 (its flags sit behind a pointer a
 * filter cannot read). The gateway's writes use it (tar-extract follow=1):
 * a user who made `ln -s data out` in the workspace expects a file written
 * to out/x to land in data/x.
 *
 * Why it cannot be led out of the root, whoever planted the symlinks and
 * whatever they swap in while it runs:
 *  - every component is opened with O_NOFOLLOW from a descriptor already
 *    held beneath the root, so the kernel never follows a symlink for us;
 *    a symlink is read (readlinkat on the very descriptor opened, so what
 *    is read is what was opened) and its target put in front of what is
 *    left of the path, to be walked the same way;
 *  - ".." is never asked of the kernel: it pops our own stack of
 *    descriptors, and popping past the root is refused (EXDEV);
 *  - an absolute target counts only when it names the root's own path
 *    (then the walk starts again from the root), else EXDEV;
 *  - at most 40 symlinks per path (ELOOP), as the kernel allows.
 * The one thing a race inside the sandbox can do is move a directory we
 * hold elsewhere in the sandbox before we write into it. That puts the file
 * where the sandbox's own code, as the same user, could have put it: the
 * agent runs file operations as the sandbox user, so no path it resolves
 * ever reaches more than that user can (DESIGN rule 3 holds either way). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/fs_int.h"

#define LINKS_MAX 40

typedef struct walk {
    int fds[FS_MAX_DEPTH + 1];    /* [0]: the root; [depth]: where we are */
    size_t depth;
    size_t ends[FS_MAX_DEPTH + 1];/* canon's length at each depth */
    char canon[PATH_MAX];         /* where we are, relative to the root, no symlink in it */
    char todo[PATH_MAX];          /* what is left to walk */
    char link[PATH_MAX];
    unsigned links;
} walk;

static void pop_to(walk *w, size_t depth)
{
    while (w->depth > depth)
        close(w->fds[w->depth--]);
    w->canon[w->ends[w->depth]] = '\0';
}

static int fail(walk *w, int e)
{
    pop_to(w, 0);
    close(w->fds[0]);
    errno = e;
    return -1;
}

/* The symlink's target (in w->link, n bytes) in front of rest: the walk
 * goes on from where the symlink is, or from the root for an absolute
 * target that names the root. -1 with errno. */
static int expand(walk *w, size_t n, const char *rest, const char *root_abs)
{
    if (++w->links > LINKS_MAX)
        return errno = ELOOP, -1;
    if (n == 0)
        return errno = ENOENT, -1;
    w->link[n] = '\0';
    const char *t = w->link;
    if (t[0] == '/') {
        size_t rl = strlen(root_abs);
        if (!strcmp(root_abs, "/"))
            rl = 0;
        else if (strncmp(t, root_abs, rl) != 0 || (t[rl] != '/' && t[rl] != '\0'))
            return errno = EXDEV, -1;
        t += rl;
        pop_to(w, 0);
    }
    char next[PATH_MAX];
    int k = snprintf(next, sizeof(next), "%s/%s", t, rest);
    if (k < 0 || (size_t)k >= sizeof(next))
        return errno = ENAMETOOLONG, -1;
    memcpy(w->todo, next, (size_t)k + 1);
    return 0;
}

static int push(walk *w, int fd, const char *comp)
{
    if (w->depth + 1 > FS_MAX_DEPTH) {
        close(fd);
        return errno = ENAMETOOLONG, -1;
    }
    size_t at = w->ends[w->depth];
    int k = snprintf(w->canon + at, sizeof(w->canon) - at, "%s%s", at ? "/" : "", comp);
    if (k < 0 || (size_t)k >= sizeof(w->canon) - at) {
        w->canon[at] = '\0';
        close(fd);
        return errno = ENAMETOOLONG, -1;
    }
    w->fds[++w->depth] = fd;
    w->ends[w->depth] = at + (size_t)k;
    return 0;
}

int fs_resolve_beneath(int root, const char *root_abs, const char *rel, bool create,
                       void (*made)(void *ctx, const char *rel), void *ctx, fs_beneath *out)
{
    /* Large (three paths and a stack of descriptors), and file operations
     * run one per process (an exec's child): static. */
    static walk w;
    w.depth = 0;
    w.ends[0] = 0;
    w.canon[0] = '\0';
    w.links = 0;
    w.fds[0] = fcntl(root, F_DUPFD_CLOEXEC, 0);
    if (w.fds[0] < 0)
        return -1;
    if (snprintf(w.todo, sizeof(w.todo), "%s", rel) >= (int)sizeof(w.todo))
        return fail(&w, ENAMETOOLONG);
    const char *p = w.todo;
    for (;;) {
        while (*p == '/')
            p++;
        if (!*p) {
            /* The path ended on a directory ("", "a/", "a/.."): itself. */
            snprintf(out->leaf, sizeof(out->leaf), ".");
            break;
        }
        const char *q = p;
        while (*q && *q != '/')
            q++;
        size_t len = (size_t)(q - p);
        if (len > NAME_MAX)
            return fail(&w, ENAMETOOLONG);
        char comp[NAME_MAX + 1];
        memcpy(comp, p, len);
        comp[len] = '\0';
        const char *rest = q;
        while (*rest == '/')
            rest++;
        bool last = !*rest;
        int top = w.fds[w.depth];
        p = rest;
        if (!strcmp(comp, "."))
            continue;
        if (!strcmp(comp, "..")) {
            if (w.depth == 0)
                return fail(&w, EXDEV);
            pop_to(&w, w.depth - 1);
            continue;
        }
        if (last) {
            /* The leaf: followed when it is a symlink, else the caller's to
             * make or replace (never following it: it is no symlink). */
            ssize_t n = readlinkat(top, comp, w.link, sizeof(w.link) - 1);
            if (n < 0 && errno != EINVAL && errno != ENOENT)
                return fail(&w, errno);
            if (n < 0) {
                snprintf(out->leaf, sizeof(out->leaf), "%s", comp);
                break;
            }
            if (expand(&w, (size_t)n, "", root_abs) < 0)
                return fail(&w, errno);
            p = w.todo;
            continue;
        }
        int fd = openat(top, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT && create) {
            if (mkdirat(top, comp, 0755) == 0) {
                if (made) {
                    char full[PATH_MAX + NAME_MAX + 2];
                    snprintf(full, sizeof(full), "%s%s%s", w.canon, w.canon[0] ? "/" : "", comp);
                    made(ctx, full);
                }
            } else if (errno != EEXIST) {
                return fail(&w, errno);
            }
            fd = openat(top, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        }
        if (fd < 0)
            return fail(&w, errno);
        struct stat st;
        if (fstat(fd, &st) < 0) {
            int e = errno;
            close(fd);
            return fail(&w, e);
        }
        if (S_ISLNK(st.st_mode)) {
            /* Read from the descriptor: the link we opened, not one swapped in since. */
            ssize_t n = readlinkat(fd, "", w.link, sizeof(w.link) - 1);
            int e = errno;
            close(fd);
            if (n < 0)
                return fail(&w, e);
            /* (rest points into todo: expand reads it before rewriting todo.) */
            if (expand(&w, (size_t)n, rest, root_abs) < 0)
                return fail(&w, errno);
            p = w.todo;
            continue;
        }
        if (!S_ISDIR(st.st_mode)) {
            close(fd);
            return fail(&w, ENOTDIR);
        }
        if (push(&w, fd, comp) < 0)
            return fail(&w, errno);
    }
    snprintf(out->parent, sizeof(out->parent), "%s", w.canon);
    out->dir = w.fds[w.depth];
    for (size_t i = 0; i < w.depth; i++)
        close(w.fds[i]);
    return 0;
}
