/* placeholder: being written (issue #7) */
#include "config.h"
#include "cli.h"

int cli_sim(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	cli_err("sim: not built yet");
	return 2;
}
