/* ustar/pax header codec for the agent's archives, and a streaming reader
 * that turns a byte source into entries. Pure: no file is opened here, so
 * the unit tests and the fuzzer drive every byte of it (the agent's tar
 * ops in agent/fs_tar_create.c and fs_tar_extract.c do the filesystem side).
 *
 * What is understood: POSIX ustar headers (name + prefix), v7 headers,
 * pax extended headers ('x': path, linkpath, size, mtime, uid, gid; 'g'
 * is skipped), GNU long names ('L', 'K'), octal and base-256 numbers.
 * What is written: ustar, with a pax header before an entry whose name
 * cannot be split into prefix/name, whose link target passes 100 bytes,
 * or whose size, mtime, uid or gid does not fit the octal field (those
 * fields then also carry base-256, which GNU readers take without pax). */
#ifndef CELLA_UTIL_TAR_H
#define CELLA_UTIL_TAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/buf.h"

#define TAR_BLOCK 512
/* Names and link targets, NUL included: PATH_MAX, what any *at call takes. */
#define TAR_NAME_MAX 4096
/* An extended header's records are held whole to be parsed: capped. */
#define TAR_PAX_MAX (1u << 20)
/* The largest size, mtime, uid/gid the octal fields hold (11 and 7 digits). */
#define TAR_OCTAL11_MAX 077777777777LL
#define TAR_OCTAL7_MAX 07777777LL

enum tar_status {
    TAR_OK = 0,
    TAR_END = 1,                  /* the end-of-archive zero block */
    TAR_ECHECKSUM = -1,           /* header checksum wrong: not a tar, or corrupt */
    TAR_EFIELD = -2,              /* a numeric field that is not a number */
    TAR_ELONG = -3,               /* a name or link target of TAR_NAME_MAX bytes or more */
    TAR_EPAX = -4,                /* a malformed or oversized pax header */
    TAR_ETRUNC = -5,              /* the input ended before the end-of-archive block */
    TAR_EREAD = -6,               /* the byte source failed (errno says why) */
    TAR_ECOMPRESSED = -7,         /* gzip, bzip2, xz or zstd magic where a header goes */
};

/* One archive member, as decoded or to encode. Strings are NUL-terminated. */
typedef struct tar_entry {
    char name[TAR_NAME_MAX];
    char linkname[TAR_NAME_MAX];
    uint64_t size;                /* content bytes following the header */
    uint32_t mode;                /* permission bits, 07777 at most */
    int64_t mtime;                /* seconds since the epoch */
    uint64_t uid, gid;
    char type;                    /* typeflag; a v7 '\0' reads as '0' */
} tar_entry;

/* Keys of a pax extended header that override the next entry's fields. */
enum {
    TAR_PAX_PATH = 1u << 0,
    TAR_PAX_LINKPATH = 1u << 1,
    TAR_PAX_SIZE = 1u << 2,
    TAR_PAX_MTIME = 1u << 3,
    TAR_PAX_UID = 1u << 4,
    TAR_PAX_GID = 1u << 5,
    TAR_PAX_SPARSE = 1u << 6,     /* a GNU.sparse.* key: the data is a sparse map */
};
typedef struct tar_pax {
    unsigned have;                /* TAR_PAX_* of the fields set */
    char path[TAR_NAME_MAX];
    char linkpath[TAR_NAME_MAX];
    uint64_t size, uid, gid;
    int64_t mtime;
} tar_pax;

const char *tar_strerror(int status);

/* The header's checksum: the unsigned sum of its bytes with the checksum
 * field counted as spaces. */
unsigned tar_checksum(const uint8_t h[TAR_BLOCK]);
/* A numeric field: octal (leading spaces, then digits, then spaces or
 * NULs; a blank field is 0) or GNU base-256 (first byte 0x80, or 0xff for
 * a negative value). Returns 0, or -1 for anything else or an overflow. */
int tar_num_decode(const uint8_t *f, size_t len, int64_t *out);
/* Octal with a NUL when v fits len-1 digits, else base-256. */
void tar_num_encode(uint8_t *f, size_t len, int64_t v);

/* Decodes one header block into e. Returns TAR_OK, TAR_END for an all-zero
 * block, TAR_ECHECKSUM or TAR_EFIELD. Fields are copied with their length
 * bound (a full field has no NUL); size is the declared one, whatever the
 * type. */
int tar_header_decode(const uint8_t h[TAR_BLOCK], tar_entry *e);

/* Appends one pax record "LEN key=value\n", LEN counting its own digits. */
void tar_pax_record(cbuf *out, const char *key, const char *val, size_t vlen);
/* Parses the records of an extended header into x (later records override
 * earlier ones; unknown keys are ignored). Returns TAR_OK, TAR_EPAX or
 * TAR_ELONG. */
int tar_pax_parse(const uint8_t *p, size_t n, tar_pax *x);

/* Appends the header block(s) of e: a pax header and its records when a
 * field needs one, then the ustar header. The content and its padding to
 * TAR_BLOCK are the caller's. Returns 0, or -1 when e cannot be written
 * (an empty or too long name, a size past INT64_MAX). */
int tar_encode(cbuf *out, const tar_entry *e);

/* ---- reading an archive ---------------------------------------------------- */

/* The byte source: up to n bytes into buf; 0 at the end, -1 on failure. */
typedef ssize_t (*tar_read_fn)(void *ctx, void *buf, size_t n);

#define TAR_READ_BUF (64u << 10)

typedef struct tar_reader {
    tar_read_fn read;
    void *ctx;
    uint64_t headers;             /* header blocks read, extended ones included */
    uint64_t remaining;           /* content bytes of the current entry not read yet */
    uint64_t pad;                 /* then this many padding bytes */
    int state;                    /* TAR_OK, or the sticky TAR_END / error */
    bool eof;
    unsigned gnu;                 /* TAR_PAX_PATH / _LINKPATH set by 'L' / 'K' */
    size_t pos, len;              /* unconsumed bytes of buf */
    tar_pax pax;                  /* pending extended header */
    char gnu_name[TAR_NAME_MAX], gnu_link[TAR_NAME_MAX];
    uint8_t buf[TAR_READ_BUF];
} tar_reader;

void tar_reader_init(tar_reader *r, tar_read_fn fn, void *ctx);
/* The next member, extended headers applied to it. Content not read of the
 * previous one is skipped. e->size is the content that follows (0 for
 * links, directories, devices and FIFOs, which carry none). Returns TAR_OK,
 * TAR_END (then always TAR_END) or an error (then always that error). */
int tar_next(tar_reader *r, tar_entry *e);
/* Up to n bytes of the current member's content: > 0 bytes, 0 when all was
 * read, or an error status (TAR_ETRUNC, TAR_EREAD). */
ssize_t tar_read(tar_reader *r, void *buf, size_t n);

#endif
