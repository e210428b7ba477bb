/* Coroutine stacks: a run executes on its own stack so that a host call can
 * pause it without unwinding (the host gets control back with the run's C
 * frames intact, and resuming switches back into them). Generator
 * expressions and async tasks get stacks of their own the same way.
 *
 * The switch is a few instructions of assembly on x86-64 (ucontext's
 * swapcontext makes a signal-mask system call per switch, which a generator
 * pays per item); elsewhere it is ucontext. Stacks are mmap'd with a guard
 * page below them and kept in a small per-thread cache, since mapping one
 * costs more than a whole small run. Under ASan every switch is announced
 * with the fiber annotations so the sanitizer follows the stack changes. */
#include "code/code_eval.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define CODE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CODE_ASAN 1
#endif
#endif

#ifdef CODE_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

#define GUARD 4096

/* The assembly switch on x86-64; ucontext elsewhere, or when
 * CODE_CORO_UCONTEXT is defined (to test that path). */
#if defined(__x86_64__) && !defined(CODE_CORO_UCONTEXT)
#define CODE_CORO_ASM 1
#endif

/* ---- the stack cache: per thread, a few stacks of each size ---------------- */

#define CACHE_N 8
typedef struct stack_cache { void *stack[CACHE_N]; size_t size[CACHE_N]; int n; } stack_cache;
static _Thread_local stack_cache tl_cache;

static void *stack_get(size_t size)
{
    stack_cache *c = &tl_cache;
    for (int i = c->n - 1; i >= 0; i--)
        if (c->size[i] == size) {
            void *s = c->stack[i];
            c->stack[i] = c->stack[c->n - 1];
            c->size[i] = c->size[c->n - 1];
            c->n--;
#ifdef CODE_ASAN
            /* a finished coroutine's last frames (its entry, the final
             * switch) never returned: their redzones sit at the top */
            size_t k = size < ((size_t)64 << 10) ? size : ((size_t)64 << 10);
            __asan_unpoison_memory_region((char *)s + GUARD + size - k, k);
#endif
            return s;
        }
    /* The whole range inaccessible, then the usable part mapped over it: only
     * mmap, which the worker's seccomp filter allows. */
    void *m = mmap(NULL, size + GUARD, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    void *u = mmap((char *)m + GUARD, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED | MAP_STACK, -1, 0);
    if (u == MAP_FAILED) {
        munmap(m, size + GUARD);
        return NULL;
    }
    return m;
}

static void stack_put(void *s, size_t size)
{
    stack_cache *c = &tl_cache;
    if (c->n < CACHE_N) {
        c->stack[c->n] = s;
        c->size[c->n] = size;
        c->n++;
        return;
    }
    munmap(s, size + GUARD);
}

/* ---- the switch ----------------------------------------------------------- */

#ifdef CODE_CORO_ASM
void code_ctx_swap_asm(void **save_sp, void *new_sp);
void code_ctx_boot(void);
__asm__(".text\n"
        ".globl code_ctx_swap_asm\n"
        ".hidden code_ctx_swap_asm\n"
        ".type code_ctx_swap_asm,@function\n"
        "code_ctx_swap_asm:\n"
        "  pushq %rbp\n"
        "  pushq %rbx\n"
        "  pushq %r12\n"
        "  pushq %r13\n"
        "  pushq %r14\n"
        "  pushq %r15\n"
        "  subq $8, %rsp\n"
        "  stmxcsr (%rsp)\n"
        "  fnstcw 4(%rsp)\n"
        "  movq %rsp, (%rdi)\n"
        "  movq %rsi, %rsp\n"
        "  ldmxcsr (%rsp)\n"
        "  fldcw 4(%rsp)\n"
        "  addq $8, %rsp\n"
        "  popq %r15\n"
        "  popq %r14\n"
        "  popq %r13\n"
        "  popq %r12\n"
        "  popq %rbx\n"
        "  popq %rbp\n"
        "  ret\n"
        ".size code_ctx_swap_asm, .-code_ctx_swap_asm\n"
        ".globl code_ctx_boot\n"
        ".hidden code_ctx_boot\n"
        ".type code_ctx_boot,@function\n"
        "code_ctx_boot:\n"
        "  movq %r12, %rdi\n"
        "  callq *%r13\n"
        "  ud2\n"
        ".size code_ctx_boot, .-code_ctx_boot\n");
#else
#include <ucontext.h>
#endif

static void ctx_start(code_ctx *c)
{
#ifdef CODE_ASAN
    const void *b;
    size_t s;
    __sanitizer_finish_switch_fiber(NULL, &b, &s);
    if (c->from && !c->from->stack) {
        c->from->bottom = b;
        c->from->bsize = s;
    }
#endif
    c->entry(c->arg);
    __builtin_trap();   /* an entry switches away for good; it never returns */
}

#ifndef CODE_CORO_ASM
static void ctx_start_uc(unsigned hi, unsigned lo)
{
    ctx_start((code_ctx *)(((uintptr_t)hi << 32) | lo));
}
#endif

int code_ctx_make(code_ctx *ctx, size_t size, void (*entry)(void *), void *arg)
{
    memset(ctx, 0, sizeof(*ctx));
    ctx->stack = stack_get(size);
    if (!ctx->stack)
        return -1;
    ctx->size = size;
    ctx->entry = entry;
    ctx->arg = arg;
    ctx->bottom = (char *)ctx->stack + GUARD;
    ctx->bsize = size;
#ifdef CODE_CORO_ASM
    uintptr_t top = ((uintptr_t)ctx->stack + GUARD + size) & ~(uintptr_t)15;
    uint64_t *sp = (uint64_t *)(top - 8);   /* the return address: 8 mod 16 */
    *sp = (uint64_t)(uintptr_t)code_ctx_boot;
    *--sp = 0;                                /* rbp */
    *--sp = 0;                                /* rbx */
    *--sp = (uint64_t)(uintptr_t)ctx;         /* r12: the argument */
    *--sp = (uint64_t)(uintptr_t)ctx_start;   /* r13: the function */
    *--sp = 0;                                /* r14 */
    *--sp = 0;                                /* r15 */
    *--sp = 0x037F00001F80ull;                /* mxcsr, x87 control word */
    ctx->sp = sp;
#else
    ucontext_t *uc = calloc(1, sizeof(*uc));
    if (!uc || getcontext(uc)) {
        free(uc);
        stack_put(ctx->stack, size);
        return -1;
    }
    uc->uc_stack.ss_sp = (char *)ctx->stack + GUARD;
    uc->uc_stack.ss_size = size;
    uc->uc_link = NULL;
    makecontext(uc, (void (*)(void))ctx_start_uc, 2, (unsigned)((uintptr_t)ctx >> 32),
                (unsigned)(uintptr_t)ctx);
    ctx->sp = uc;
#endif
    return 0;
}

void code_ctx_release(code_ctx *ctx)
{
    if (!ctx->stack)
        return;   /* never made, or released already */
    stack_put(ctx->stack, ctx->size);
#ifndef CODE_CORO_ASM
    free(ctx->sp);
#endif
    ctx->sp = NULL;
    ctx->stack = NULL;
}

void code_ctx_host_done(code_ctx *ctx)
{
#ifndef CODE_CORO_ASM
    free(ctx->sp);   /* the host's saved ucontext */
#endif
    ctx->sp = NULL;
}

void code_ctx_abandon(code_ctx *ctx)
{
#ifdef CODE_ASAN
    /* frames that never returned left their redzones poisoned */
    if (ctx->stack)
        __asan_unpoison_memory_region((char *)ctx->stack + GUARD, ctx->size);
#endif
    code_ctx_release(ctx);
}

void code_ctx_switch(code_ctx *from, code_ctx *to, bool dying)
{
    to->from = from;
#ifdef CODE_ASAN
    __sanitizer_start_switch_fiber(dying ? NULL : &from->fake, to->bottom, to->bsize);
#else
    (void)dying;
#endif
#ifdef CODE_CORO_ASM
    code_ctx_swap_asm(&from->sp, to->sp);
#else
    if (!from->sp)
        from->sp = calloc(1, sizeof(ucontext_t));
    swapcontext(from->sp, to->sp);
#endif
#ifdef CODE_ASAN
    const void *b;
    size_t s;
    __sanitizer_finish_switch_fiber(from->fake, &b, &s);
    if (from->from && !from->from->stack) {
        from->from->bottom = b;
        from->from->bsize = s;
    }
#endif
}

/* A coroutine stack's pages are memory the program makes the process use:
 * each live stack counts a fixed share against the run's byte limit, so a
 * program cannot park a million tasks for free. */
#define STACK_CHARGE ((size_t)32 << 10)

int code_stack_charge(code_vm *vm)
{
    code_mem *m = &vm->mem;
    if (m->max_bytes && m->bytes + STACK_CHARGE > m->max_bytes) {
        m->failed = true;
        code_raise_nomem(vm);
        return -1;
    }
    m->bytes += STACK_CHARGE;
    return 0;
}

void code_stack_uncharge(code_vm *vm)
{
    code_mem *m = &vm->mem;
    m->bytes -= STACK_CHARGE <= m->bytes ? STACK_CHARGE : m->bytes;
}
