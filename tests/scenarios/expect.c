/*
 * tests/scenarios/expect.c - checks `topogang place --output json` against
 * the "# expect" lines at the top of a scenario file; prints TAP lines
 * (without a plan: run-scenarios prints it).
 *
 *   expect CASE-FILE TEST-NUMBER EXIT-STATUS < output.json
 *
 * Expectation lines (see README.md):
 *   # expect exit=N
 *   # expect GANG status=placed|preempting|unschedulable
 *   # expect GANG domain=SpineLayer/spine-1
 *   # expect GANG nodes=node-5,node-6,...        (rank order)
 *   # expect GANG pods=ns/pod@node,...           (any order)
 *   # expect GANG gpus=ns/pod@0-3,...
 *   # expect GANG victims=ns/pod,...             (any order; "" = none)
 *   # expect GANG message~TEXT
 *   # expect warnings~TEXT
 *
 * With TG_REGEN=1 it prints regenerated expectation lines instead (for
 * review: run-scenarios writes them into the file and git diff shows
 * what changed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

static int n_test;
static int failed;

static void report(int ok, const char *what, const char *got,
		   const char *want)
{
	printf("%sok %d - %s\n", ok ? "" : "not ", ++n_test, what);
	if (!ok) {
		printf("#   got:      '%s'\n#   expected: '%s'\n", got, want);
		failed = 1;
	}
}

static cJSON *find_gang(cJSON *root, const char *name)
{
	cJSON *g;

	cJSON_ArrayForEach(g, cJSON_GetObjectItem(root, "gangs")) {
		const char *n = cJSON_GetStringValue(
			cJSON_GetObjectItem(g, "name"));

		if (n && !strcmp(n, name))
			return g;
	}
	return NULL;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorts a comma list in place (for order-free comparisons). */
static void sort_list(char *s)
{
	char *items[4096], *out;
	size_t n = 0, i, len = strlen(s);
	char *p = s;

	if (!*s)
		return;
	out = malloc(len + 1);
	if (!out)
		return;
	while (p && n < 4096) {
		char *c = strchr(p, ',');

		if (c)
			*c = '\0';
		items[n++] = p;
		p = c ? c + 1 : NULL;
	}
	qsort(items, n, sizeof(char *), cmp_str);
	out[0] = '\0';
	for (i = 0; i < n; i++) {
		if (i)
			strcat(out, ",");
		strcat(out, items[i]);
	}
	memcpy(s, out, len + 1);
	free(out);
}

static void gpu_text(cJSON *arr, char *buf, size_t len)
{
	cJSON *x;
	int prev = -2, start = -1;
	size_t off = 0;

	buf[0] = '\0';
	cJSON_ArrayForEach(x, arr) {
		int v = (int)x->valuedouble;

		if (v == prev + 1) {
			prev = v;
			continue;
		}
		if (start >= 0)
			off += (size_t)snprintf(buf + off, len - off,
				prev > start ? "%s%d-%d" : "%s%d",
				off ? "+" : "", start, prev);
		start = prev = v;
	}
	if (start >= 0)
		snprintf(buf + off, len - off, prev > start ? "%s%d-%d" :
			 "%s%d", off ? "+" : "", start, prev);
}

/* Builds the actual value of a field as text. */
static void actual(cJSON *g, const char *field, char *buf, size_t len)
{
	cJSON *x;
	size_t off = 0;

	buf[0] = '\0';
	if (!strcmp(field, "status") || !strcmp(field, "domain") ||
	    !strcmp(field, "message")) {
		const char *v = cJSON_GetStringValue(
			cJSON_GetObjectItem(g, field));

		snprintf(buf, len, "%s", v ? v : "");
		return;
	}
	if (!strcmp(field, "victims")) {
		cJSON_ArrayForEach(x, cJSON_GetObjectItem(g, "victims"))
			off += (size_t)snprintf(buf + off, len - off, "%s%s",
				off ? "," : "", cJSON_GetStringValue(
				cJSON_GetObjectItem(x, "pod")));
		sort_list(buf);
		return;
	}
	cJSON_ArrayForEach(x, cJSON_GetObjectItem(g, "placements")) {
		const char *pod = cJSON_GetStringValue(
			cJSON_GetObjectItem(x, "pod"));
		const char *node = cJSON_GetStringValue(
			cJSON_GetObjectItem(x, "node"));
		char gb[256];

		if (off + 1 >= len)
			break;
		if (!strcmp(field, "nodes")) {
			off += (size_t)snprintf(buf + off, len - off, "%s%s",
						off ? "," : "", node);
		} else if (!strcmp(field, "pods")) {
			off += (size_t)snprintf(buf + off, len - off, "%s%s@%s",
						off ? "," : "", pod, node);
		} else if (!strcmp(field, "gpus")) {
			gpu_text(cJSON_GetObjectItem(x, "gpus"), gb,
				 sizeof(gb));
			off += (size_t)snprintf(buf + off, len - off, "%s%s@%s",
						off ? "," : "", pod, gb);
		}
	}
	if (!strcmp(field, "pods") || !strcmp(field, "gpus"))
		sort_list(buf);
}

static char *slurp(FILE *f)
{
	size_t cap = 1 << 16, n = 0, r;
	char *b = malloc(cap);

	while (b && (r = fread(b + n, 1, cap - n - 1, f)) > 0) {
		n += r;
		if (n + 1 >= cap) {
			char *nb = realloc(b, cap *= 2);

			if (!nb) {
				free(b);
				return NULL;
			}
			b = nb;
		}
	}
	if (b)
		b[n] = '\0';
	return b;
}

int main(int argc, char **argv)
{
	static char line[65536], got[1 << 16], want[1 << 16];
	FILE *cf;
	char *json;
	cJSON *root;
	int exit_status, regen = getenv("TG_REGEN") != NULL;
	const char *base;

	if (argc != 4) {
		fprintf(stderr, "usage: expect CASE N EXIT < json\n");
		return 2;
	}
	n_test = atoi(argv[2]);
	exit_status = atoi(argv[3]);
	base = strrchr(argv[1], '/') ? strrchr(argv[1], '/') + 1 : argv[1];
	json = slurp(stdin);
	root = json ? cJSON_Parse(json) : NULL;
	cf = fopen(argv[1], "r");
	if (!cf) {
		perror(argv[1]);
		return 2;
	}
	if (!root && !regen)
		report(0, "output is JSON", json ? json : "", "JSON");
	while (fgets(line, sizeof(line), cf)) {
		char *p, *sp, *op, what[512];
		cJSON *g;

		if (strncmp(line, "# expect ", 9))
			continue;
		line[strcspn(line, "\n")] = '\0';
		p = line + 9;
		if (!strncmp(p, "exit=", 5)) {
			snprintf(got, sizeof(got), "%d", exit_status);
			if (regen) {
				printf("# expect exit=%s\n", got);
				continue;
			}
			snprintf(what, sizeof(what), "%s: exit status", base);
			report(!strcmp(got, p + 5), what, got, p + 5);
			continue;
		}
		if (!strncmp(p, "warnings~", 9)) {
			cJSON *w;
			int hit = 0;

			if (regen) {
				printf("%s\n", line);
				continue;
			}
			cJSON_ArrayForEach(w, cJSON_GetObjectItem(root,
							"warnings"))
				if (strstr(cJSON_GetStringValue(w), p + 9))
					hit = 1;
			snprintf(what, sizeof(what), "%s: a warning says '%s'",
				 base, p + 9);
			report(hit, what, "(no such warning)", p + 9);
			continue;
		}
		sp = strchr(p, ' ');
		if (!sp)
			continue;
		*sp = '\0';
		op = sp + 1 + strcspn(sp + 1, "=~");
		if (!*op)
			continue;
		{
			char field[64];
			size_t fl = (size_t)(op - (sp + 1));

			if (fl >= sizeof(field))
				fl = sizeof(field) - 1;
			memcpy(field, sp + 1, fl);
			field[fl] = '\0';
			g = root ? find_gang(root, p) : NULL;
			if (!g) {
				if (regen) {
					printf("# expect %s %s%c%s\n", p, field,
					       *op, op + 1);
					continue;
				}
				snprintf(what, sizeof(what), "%s: gang %s "
					 "decided", base, p);
				report(0, what, "(no such gang)", p);
				continue;
			}
			actual(g, field, got, sizeof(got));
			snprintf(want, sizeof(want), "%s", op + 1);
			if (regen) {
				if (*op == '~')
					printf("# expect %s %s~%s\n", p, field,
					       op + 1);
				else
					printf("# expect %s %s=%s\n", p, field,
					       got);
				continue;
			}
			if (*op == '~') {
				snprintf(what, sizeof(what), "%s: %s %s "
					 "mentions '%s'", base, p, field,
					 want);
				report(strstr(got, want) != NULL, what, got,
				       want);
			} else {
				if (!strcmp(field, "pods") ||
				    !strcmp(field, "victims") ||
				    !strcmp(field, "gpus"))
					sort_list(want);
				snprintf(what, sizeof(what), "%s: %s %s", base,
					 p, field);
				report(!strcmp(got, want), what, got, want);
			}
		}
	}
	fclose(cf);
	cJSON_Delete(root);
	free(json);
	if (!regen)
		fprintf(stderr, "%d\n", n_test);
	return failed;
}
