/*
 * tests/fuzz/replay.c - a main() for the libFuzzer targets in this
 * directory, for builds without libFuzzer: every file named on the
 * command line (or every file in a directory named there) is given once
 * to LLVMFuzzerTestOneInput().  `make check` links each target with it
 * (fuzz/test-fuzz-replay) and replays the seed corpus under the suite's
 * sanitizers, so a target that no longer compiles, or a corpus input
 * that now crashes or trips a target's own check, fails the suite.
 *
 * Prints "replayed N inputs" and exits 0; a target that fails aborts.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REPLAY_MAX_INPUT	(16u << 20)	/* bytes of one input */

static unsigned replayed;

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	size_t n;

	if (!f) {
		fprintf(stderr, "replay: %s: cannot open\n", path);
		return -1;
	}
	buf = malloc(REPLAY_MAX_INPUT + 1);
	if (!buf) {
		fclose(f);
		fprintf(stderr, "replay: %s: out of memory\n", path);
		return -1;
	}
	n = fread(buf, 1, REPLAY_MAX_INPUT + 1, f);
	fclose(f);
	if (n > REPLAY_MAX_INPUT) {
		free(buf);
		fprintf(stderr, "replay: %s: larger than REPLAY_MAX_INPUT "
			"(%u bytes)\n", path, REPLAY_MAX_INPUT);
		return -1;
	}
	LLVMFuzzerTestOneInput(buf, n);
	free(buf);
	replayed++;
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A directory's plain files, in name order (the same on every run). */
static int replay_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL, path[4096];
	size_t n = 0, cap = 0, i;
	int rc = 0;

	if (!d) {
		fprintf(stderr, "replay: %s: cannot open\n", dir);
		return -1;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			char **nn;

			cap = cap ? 2 * cap : 64;
			nn = realloc(names, cap * sizeof(*names));
			if (!nn) {
				rc = -1;
				break;
			}
			names = nn;
		}
		names[n] = strdup(e->d_name);
		if (!names[n]) {
			rc = -1;
			break;
		}
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_names);
	for (i = 0; i < n; i++) {
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (rc == 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode))
			rc = replay_file(path);
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		struct stat st;

		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "replay: %s: no such file\n", argv[i]);
			return 1;
		}
		if ((S_ISDIR(st.st_mode) ? replay_dir(argv[i]) :
		     replay_file(argv[i])) != 0)
			return 1;
	}
	printf("replayed %u inputs\n", replayed);
	return 0;
}
