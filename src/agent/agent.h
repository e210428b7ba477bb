/* The agent: PID 1 of every sandbox, this same binary re-executed as
 * `cella __agent` with its socket on descriptor 3. */
#ifndef CELLA_AGENT_AGENT_H
#define CELLA_AGENT_AGENT_H

int agent_main(void);

#endif
