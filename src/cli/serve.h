#ifndef CELLA_CLI_SERVE_H
#define CELLA_CLI_SERVE_H

/* `cella serve`: the daemon. */
int cli_serve_main(int argc, char **argv);

#endif
