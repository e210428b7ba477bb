/* The sandbox's seccomp filter. It is compiled once, at build time, by
 * tools/seccomp_gen.c calling box_seccomp_compile(); the binary carries the
 * resulting BPF (box_seccomp_bpf) and hands it to each agent, which loads it
 * on itself, so every command it starts inherits it. */
#ifndef CELLA_BOX_SECCOMP_H
#define CELLA_BOX_SECCOMP_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

/* The first x86_64 syscall number this filter does not know (Linux 6.17 ends
 * at 469, file_setattr). Anything from here up is answered ENOSYS until it
 * has been looked at, so a newer kernel's additions are not open by default. */
#define SECCOMP_FIRST_UNKNOWN_NR 470

/* Returns a heap array of struct sock_filter in *bpf (length in bytes).
 * Needs libseccomp: linked into the generator and the tests only. */
int box_seccomp_compile(uint8_t **bpf, size_t *len, cella_err *err);

/* The compiled program (generated seccomp_bpf.c). */
extern const uint8_t box_seccomp_bpf[];
extern const size_t box_seccomp_bpf_len;

#endif
