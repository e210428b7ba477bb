/* The state directory: the only host directory cella writes to. It is created
 * 0700 and owned by the user running cella, so no other host user can reach
 * anything below it (sandbox workspaces included). */
#ifndef CELLA_CORE_STATEDIR_H
#define CELLA_CORE_STATEDIR_H

#include <stdint.h>

#include "util/err.h"

typedef struct statedir {
    char *path;
    int fd;              /* directory fd on the state dir */
    uint32_t node_key;
} statedir;

/* The default: $CELLA_STATE_DIR, else /var/lib/cella for root, else
 * $XDG_STATE_HOME/cella or ~/.local/state/cella. Heap string. */
char *statedir_default_path(void);
int statedir_open(const char *path, statedir *sd, cella_err *err);
void statedir_close(statedir *sd);
/* Creates (mode 0700) a subdirectory if missing and returns an fd on it. */
int statedir_subdir(statedir *sd, const char *name, cella_err *err);

#endif
