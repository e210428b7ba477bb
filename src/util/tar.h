/* ustar/pax header codec for the agent's archives. */
#ifndef CELLA_UTIL_TAR_H
#define CELLA_UTIL_TAR_H
#endif
