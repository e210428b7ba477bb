/* Dump bytes (code_dump.c writes them, code_dump_load.c reads them): the
 * pieces the loader, its tests and its fuzz target share. */
#ifndef CELLA_CODE_DUMP_INT_H
#define CELLA_CODE_DUMP_INT_H

#include <stddef.h>
#include <stdint.h>

#include "code/code_run_int.h"

#define CODE_DUMP_MAGIC "CELLACD\x01"
#define CODE_DUMP_MAGIC_LEN 8
#define CODE_DUMP_VERSION 1u

/* Caps beyond "no more than the bytes can hold": a dump past them is
 * refused before anything is allocated for it. */
#define CODE_DUMP_MAX_SRC ((size_t)16 << 20)
#define CODE_DUMP_MAX_TEXT ((size_t)64 << 20)     /* one input, one answer */
#define CODE_DUMP_MAX_COUNT 1000000u              /* inputs, functions, calls */

/* This build's identity, written in every dump and required on load. */
const char *code_dump_identity(char *buf, size_t cap);
uint64_t code_dump_fnv1a(const void *p, size_t n);

/* rec as dump bytes (malloc'd): what code_run_dump writes of a run. */
int code_dump_write(const code_run_record *rec, char **buf, size_t *len, code_error *err);
/* Reads dump bytes into rec (every string a malloc'd copy, functions NULL
 * when none were declared), checking everything but the replay. 0, or -1
 * with err set (ValueError) and rec left empty. */
int code_dump_parse(const char *buf, size_t len, code_run_record *rec, code_error *err);
void code_dump_record_free(code_run_record *rec);

#endif
