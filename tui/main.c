/* main.c - the hunch command line: argument parsing and mode dispatch. */
#include "hunch_config.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--version") == 0) {
		printf("hunch %s\n", HUNCH_VERSION);
		return 0;
	}
	fprintf(stderr, "hunch: not yet\n");
	return 1;
}
