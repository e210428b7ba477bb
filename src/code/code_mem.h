/* Code mode's memory: every allocation of an interpreter instance goes through
 * one hook (Lua-style, with the instance's own user data, so there is no
 * global state) and is counted against the instance's byte and allocation
 * limits. An allocation over a limit, or one the hook refuses (returns NULL),
 * is reported to the caller, who raises MemoryError; only the default hook
 * aborts, and only on real out-of-memory. */
#ifndef CELLA_CODE_MEM_H
#define CELLA_CODE_MEM_H

#include <stdbool.h>
#include <stddef.h>

/* realloc-shaped, as lua_Alloc: nsize == 0 frees ptr (returns NULL); otherwise
 * returns the new block or NULL to refuse. osize is the old block's size (0 for
 * a new block). */
typedef void *(*code_alloc_fn)(void *ud, void *ptr, size_t osize, size_t nsize);

typedef struct code_mem {
    code_alloc_fn fn;
    void *ud;
    size_t bytes, max_bytes;     /* live bytes; 0: no limit */
    size_t allocs, max_allocs;   /* allocations made so far; 0: no limit */
    bool failed;                 /* a limit or the hook refused once */
} code_mem;

/* fn NULL: the default hook (realloc/free, abort on out-of-memory). */
void code_mem_init(code_mem *m, code_alloc_fn fn, void *ud, size_t max_bytes,
                   size_t max_allocs);
/* NULL when a limit is reached or the hook refuses (m->failed is then set). */
void *code_mem_alloc(code_mem *m, size_t n);
void *code_mem_realloc(code_mem *m, void *p, size_t osize, size_t nsize);
void code_mem_free(code_mem *m, void *p, size_t n);

/* An arena of chunks taken from a code_mem: the AST and the parser's strings
 * live in one and are freed together. */
typedef struct code_arena_chunk code_arena_chunk;
typedef struct code_arena {
    code_mem *mem;
    code_arena_chunk *head;
    char *p, *end;
    size_t total;                /* bytes taken from mem */
} code_arena;

void code_arena_init(code_arena *a, code_mem *m);
/* 8-byte aligned, zeroed; NULL over the memory limit. */
void *code_arena_alloc(code_arena *a, size_t n);
/* A copy of n bytes plus a NUL; NULL over the limit. */
char *code_arena_strndup(code_arena *a, const char *s, size_t n);
void code_arena_free(code_arena *a);

#endif
