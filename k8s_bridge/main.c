/* placeholder: topogang-bridge is being written (issue #5) */
#include "config.h"

#include <stdio.h>

int main(void)
{
	fputs("topogang-bridge: not built yet\n", stderr);
	return 2;
}
