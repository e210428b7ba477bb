/* cella-agent: PID 1 of every sandbox. It is built as its own small static
 * executable and embedded in cella (box/agent_image.S); the runtime hands it
 * to the kernel from a sealed memfd. Static and separate because the daemon
 * links libraries (libmicrohttpd and its TLS stack) whose loading alone cost
 * ~2 ms per exec here, and every sandbox start pays one agent exec. */
#include "agent/agent.h"

int main(void)
{
    return agent_main();
}
