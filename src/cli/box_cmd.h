#ifndef CELLA_CLI_BOX_CMD_H
#define CELLA_CLI_BOX_CMD_H

/* `cella box`: argv starts after "box". Returns the process exit status. */
int cli_box_main(int argc, char **argv);

#define CLI_EXIT_FAILED 125
#define CLI_EXIT_TIMEOUT 124

#endif
