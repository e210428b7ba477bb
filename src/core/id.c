#include "core/id.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

static const char hexdig[] = "0123456789abcdef";

static void format_uuid(const uint8_t b[16], char out[CELLA_ID_LEN + 1])
{
    char *p = out;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            *p++ = '-';
        *p++ = hexdig[b[i] >> 4];
        *p++ = hexdig[b[i] & 15];
    }
    *p = '\0';
}

int cella_id_new(uint32_t node_key, cella_id *out, cella_err *err)
{
    uint8_t b[16];
    ssize_t n;
    do
        n = getrandom(b, sizeof(b), 0);
    while (n < 0 && errno == EINTR);
    if (n != (ssize_t)sizeof(b))
        return cella_err_set(err, errno, "getrandom");
    b[0] = (uint8_t)(node_key >> 24);
    b[1] = (uint8_t)(node_key >> 16);
    b[2] = (uint8_t)(node_key >> 8);
    b[3] = (uint8_t)node_key;
    b[6] = (uint8_t)((b[6] & 0x0f) | 0x80);   /* version 8 */
    b[8] = (uint8_t)((b[8] & 0x3f) | 0x80);   /* variant 0b10 */
    format_uuid(b, out->str);
    return 0;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

bool cella_id_parse(const char *s, uint8_t bytes[16])
{
    if (!s || strlen(s) != CELLA_ID_LEN)
        return false;
    int bi = 0;
    for (int i = 0; i < CELLA_ID_LEN;) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (s[i] != '-')
                return false;
            i++;
            continue;
        }
        int hi = hexval(s[i]), lo = hexval(s[i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        bytes[bi++] = (uint8_t)(hi << 4 | lo);
        i += 2;
    }
    return (bytes[6] >> 4) == 8 && (bytes[8] >> 6) == 2;
}

uint32_t cella_id_node_key(const uint8_t b[16])
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

const char *cella_id_short(const cella_id *id)
{
    return id->str + CELLA_ID_LEN - CELLA_SHORT_ID_LEN;
}
