/* Sandbox ids: RFC 9562 version-8 UUIDs. The first 32 bits are the node's key
 * (so a future router finds a sandbox's node from its id alone); every other
 * non-version, non-variant bit is random. */
#ifndef CELLA_CORE_ID_H
#define CELLA_CORE_ID_H

#include <stdbool.h>
#include <stdint.h>

#include "util/err.h"

#define CELLA_ID_LEN 36          /* 8-4-4-4-12 */
#define CELLA_SHORT_ID_LEN 12    /* the last group: 48 random bits */

typedef struct cella_id {
    char str[CELLA_ID_LEN + 1];
} cella_id;

int cella_id_new(uint32_t node_key, cella_id *out, cella_err *err);
/* Accepts exactly the canonical lower-case form; checks version 8 and variant. */
bool cella_id_parse(const char *s, uint8_t bytes[16]);
uint32_t cella_id_node_key(const uint8_t bytes[16]);
/* The short form (hostname, logs): the id's last 12 hex digits. */
const char *cella_id_short(const cella_id *id);

#endif
