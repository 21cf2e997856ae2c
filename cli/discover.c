/* placeholder: being written (issue #8) */
#include "config.h"
#include "cli.h"

int cli_discover(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	cli_err("discover: not built yet");
	return 2;
}

int cli_export(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	cli_err("export: not built yet");
	return 2;
}
