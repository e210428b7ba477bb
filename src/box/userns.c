#include "box/userns.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/fdio.h"

int userns_check_range(uint32_t base, uint32_t slots, cella_err *err)
{
    if (slots == 0)
        return cella_err_set(err, 0, "uid slots must be at least 1");
    if (base < USERNS_RANGE)
        return cella_err_set(err, 0, "uid base %u overlaps the ids of real users (< 65536)", base);
    if (base % USERNS_RANGE)
        return cella_err_set(err, 0, "uid base %u is not a multiple of 65536", base);
    uint64_t end = (uint64_t)base + (uint64_t)slots * USERNS_RANGE;
    if (end > 0xFFFFFFFFull)        /* (uid_t)-1 is never a valid id */
        return cella_err_set(err, 0, "uid base %u with %u slots runs past the largest uid", base,
                             slots);
    return 0;
}

uint32_t userns_slot_base(uint32_t base, uint32_t slot)
{
    return base + slot * USERNS_RANGE;
}

int userns_slot_try(int slots_dirfd, uint32_t host_base, userns_slot *out, cella_err *err)
{
    out->lock_fd = -1;
    char name[32];
    snprintf(name, sizeof(name), "%u", host_base);
    int fd = openat(slots_dirfd, name, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return cella_err_set(err, errno, "uid slot lock %s", name);
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
        out->lock_fd = fd;
        out->host_base = host_base;
        return 1;
    }
    int e = errno;
    close(fd);
    if (e != EWOULDBLOCK)
        return cella_err_set(err, e, "lock uid slot %s", name);
    return 0;
}

int userns_slot_acquire(int slots_dirfd, uint32_t base, uint32_t slots, uint32_t start,
                        userns_slot *out, cella_err *err)
{
    for (uint32_t i = 0; i < slots; i++) {
        uint32_t slot = (start + i) % slots;
        int rc = userns_slot_try(slots_dirfd, userns_slot_base(base, slot), out, err);
        if (rc > 0)
            out->slot = slot;
        if (rc != 0)
            return rc < 0 ? -1 : 0;
    }
    return cella_err_set(err, 0, "all %u uid slots are in use", slots);
}

void userns_slot_release(userns_slot *s)
{
    if (s->lock_fd >= 0)
        close(s->lock_fd);     /* closing drops the flock */
    s->lock_fd = -1;
}

int userns_map_text(bool root_mode, uint32_t host_base, uint32_t inside_id, uint32_t host_id,
                    char *buf, size_t n)
{
    int w = root_mode ? snprintf(buf, n, "0 %u %u\n", host_base, USERNS_RANGE)
                      : snprintf(buf, n, "%u %u 1\n", inside_id, host_id);
    return (w < 0 || (size_t)w >= n) ? -1 : 0;
}

int userns_write_maps(pid_t pid, const char *uid_map, const char *gid_map, bool deny_setgroups,
                      cella_err *err)
{
    char dir[64];
    snprintf(dir, sizeof(dir), "/proc/%d", (int)pid);
    _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return cella_err_set(err, errno, "open %s", dir);
    /* Unprivileged writers must give up setgroups before writing gid_map, or
     * the sandbox could drop supplementary groups used to deny it access. */
    if (deny_setgroups && file_write_str_at(dfd, "setgroups", "deny", err) < 0)
        return -1;
    if (file_write_str_at(dfd, "uid_map", uid_map, err) < 0)
        return -1;
    if (file_write_str_at(dfd, "gid_map", gid_map, err) < 0)
        return -1;
    return 0;
}
