#ifndef CELLA_UTIL_SIG_H
#define CELLA_UTIL_SIG_H

#include <signal.h>
#include <string.h>

/* Default dispositions for every signal and an empty mask, before an exec:
 * ignored signals and the mask would otherwise be inherited. Only sigaction
 * and sigprocmask: safe between clone/fork and exec. */
static inline void sig_reset_all(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = SIG_DFL;
    for (int s = 1; s < _NSIG; s++)
        if (s != SIGKILL && s != SIGSTOP)
            sigaction(s, &sa, NULL);   /* fails harmlessly for libc-reserved signals */
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

#endif
