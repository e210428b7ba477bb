/* The image catalog: the presets (the host image with its interpreter
 * checked) and the operator's custom images (root directories). */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core_int.h"

static const struct {
    const char *name, *interpreter;
} presets[] = {
    {"python", "/usr/bin/python3"},
    {"node", "/usr/bin/node"},
    {"shell", "/bin/sh"},
};

static bool allowed(const cella_config *cfg, const char *name)
{
    /* Unset: the embedded default, every preset and every configured custom
     * image. Set (even to []): exactly its entries, fail-closed as iii does. */
    if (!cfg->allowlist_set)
        return true;
    for (size_t i = 0; cfg->image_allowlist && cfg->image_allowlist[i]; i++)
        if (!strcmp(cfg->image_allowlist[i], name))
            return true;
    return false;
}

static bool is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

void catalog_init(core *c)
{
    const cella_config *cfg = c->cfg;
    c->n_images = 0;
    for (size_t i = 0; i < sizeof(presets) / sizeof(presets[0]); i++) {
        core_image *im = &c->images[c->n_images++];
        im->name = presets[i].name;
        im->kind = "preset";
        im->ref = "host";
        im->interpreter = presets[i].interpreter;
        im->allowed = allowed(cfg, im->name);
    }
    for (size_t i = 0; i < cfg->n_custom_images && c->n_images < CORE_MAX_IMAGES; i++) {
        core_image *im = &c->images[c->n_images++];
        im->name = cfg->custom_images[i].name;
        im->kind = "custom";
        im->ref = cfg->custom_images[i].rootfs;
        im->interpreter = NULL;
        im->allowed = allowed(cfg, im->name);
    }
}

const core_image *catalog_find(core *c, const char *name)
{
    for (size_t i = 0; i < c->n_images; i++)
        if (!strcmp(c->images[i].name, name))
            return &c->images[i];
    return NULL;
}

void catalog_allowed_list(core *c, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < c->n_images; i++) {
        if (!c->images[i].allowed)
            continue;
        int w = snprintf(buf + used, n - used, "%s%s", used ? ", " : "", c->images[i].name);
        if (w < 0 || (size_t)w >= n - used)
            break;
        used += (size_t)w;
    }
    if (!used)
        snprintf(buf, n, "(none: the allowlist is empty)");
}

const core_image *catalog_check(core *c, const char *name, core_error *e)
{
    const core_image *im = catalog_find(c, name);
    if (!im || !im->allowed) {
        char list[512];
        catalog_allowed_list(c, list, sizeof(list));
        core_fail(e, S100, "image '%s' not in catalog; valid images are %s", name, list);
        return NULL;
    }
    return im;
}

bool catalog_available(const core_image *im)
{
    /* Looked at each time: an interpreter may be installed (or an image
     * directory restored) while the daemon runs. */
    return im->interpreter ? access(im->interpreter, X_OK) == 0 : is_dir(im->ref);
}

size_t core_catalog(core *c, core_image *out, size_t max)
{
    /* The shared table is read-only after start: availability goes into
     * the caller's copy. */
    size_t n = c->n_images < max ? c->n_images : max;
    memcpy(out, c->images, n * sizeof(*out));
    for (size_t i = 0; i < n; i++)
        out[i].available = catalog_available(&out[i]);
    return n;
}
