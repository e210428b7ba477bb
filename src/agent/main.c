/* cella-agent: PID 1 of every sandbox. It is built as its own small static
 * executable and embedded in cella (box/agent_image.S); the runtime hands it
 * to the kernel from a sealed memfd. Static and separate because the daemon
 * links libraries (libmicrohttpd and its TLS stack) whose loading alone cost
 * ~2 ms per exec here, and every sandbox start pays one agent exec. */
#include "agent/agent.h"

#ifdef CELLA_SANITIZE
/* The agent handles no signal, so the kernel drops every signal sent to it
 * from inside its namespace (unprivileged, the sandbox user shares its uid
 * and may send them). The sanitizers' crash handlers would be handlers: in
 * test builds a `kill -SEGV 1` from inside would end the sandbox. A real
 * crash still ends the agent, and the daemon sees its death. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:handle_abort=0";
}
#endif

int main(void)
{
    return agent_main();
}
