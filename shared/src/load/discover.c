/*
 * shared/src/load/discover.c - what is inside one host: GPUs, their PCI and
 * NUMA locality, NICs and NVLink islands.
 *
 * Sources: `nvidia-smi topo -m` text (parsed here), an hwloc XML export
 * or the live host (through libhwloc when the build has it: HAVE_HWLOC).
 * hwloc 3.x XML files are read by the hwloc 2 library after two
 * translations (the version attribute, and OS-device types, which became
 * a bit mask in 3.0); nothing else in those files trips hwloc 2.
 *
 * The result is a tg_nodeinfo: GPUs in PCI order with their NVLink
 * counts, islands (connected GPUs), closest NIC, and writers for JSON,
 * Kubernetes labels and gres.conf.
 */
#include "config.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_HWLOC
#include <hwloc.h>
#endif

#include "internal.h"

/*
 * Bounds: columns of a line, bytes of a line of nvidia-smi text, NVLinks
 * between two GPUs, objects of an hwloc distances matrix, bytes of a CPU
 * list or model name.
 */
#define NI_MAX_TOKENS	(TG_MAX_GPUS + TG_MAX_NICS + 8)
#define NI_MAX_LINE	65536
#define NI_MAX_LINKS	999
#define NI_MAX_HWOBJS	4096
#define NI_MAX_STR	1024

typedef struct ni_gpu {
	char *name, *model, *pci, *cpus, *cores;
	int numa;
	int nic;
	tg_pci_path nic_path;
	unsigned pcikey[4];	/* domain, bus, dev, func for sorting */
	void *obj;		/* hwloc PCI object while discovering */
} ni_gpu;

typedef struct ni_nic {
	char *name, *pci;
	int numa;
	unsigned pcikey[4];
	void *obj;
} ni_nic;

struct tg_nodeinfo {
	const char *source;
	unsigned ngpus, nnics;
	ni_gpu gpu[TG_MAX_GPUS];
	ni_nic nic[TG_MAX_NICS];
	uint16_t links[TG_MAX_GPUS][TG_MAX_GPUS];
	uint8_t path[TG_MAX_GPUS][TG_MAX_NICS];	/* tg_pci_path */
	bool nvlink_known;
	unsigned nislands;
	uint8_t island[TG_MAX_GPUS];
};

static tg_nodeinfo *ni_create(const char *source)
{
	tg_nodeinfo *ni = tgi_calloc(1, sizeof(*ni));

	if (ni)
		ni->source = source;
	return ni;
}

void tg_nodeinfo_destroy(tg_nodeinfo *ni)
{
	unsigned i;

	if (!ni)
		return;
	for (i = 0; i < ni->ngpus; i++) {
		tgi_free(ni->gpu[i].name);
		tgi_free(ni->gpu[i].model);
		tgi_free(ni->gpu[i].pci);
		tgi_free(ni->gpu[i].cpus);
		tgi_free(ni->gpu[i].cores);
	}
	for (i = 0; i < ni->nnics; i++) {
		tgi_free(ni->nic[i].name);
		tgi_free(ni->nic[i].pci);
	}
	tgi_free(ni);
}

/* Every string of a GPU or NIC is set ("" when unknown). */
static tg_err ni_strings(tg_nodeinfo *ni)
{
	unsigned i;

	for (i = 0; i < ni->ngpus; i++) {
		ni_gpu *g = &ni->gpu[i];
		char nm[32];

		snprintf(nm, sizeof(nm), "GPU%u", i);
		if (!g->name && !(g->name = tgi_strdup(nm)))
			return TG_ENOMEM;
		if (!g->model && !(g->model = tgi_strdup("")))
			return TG_ENOMEM;
		if (!g->pci && !(g->pci = tgi_strdup("")))
			return TG_ENOMEM;
		if (!g->cpus && !(g->cpus = tgi_strdup("")))
			return TG_ENOMEM;
		if (!g->cores && !(g->cores = tgi_strdup("")))
			return TG_ENOMEM;
	}
	for (i = 0; i < ni->nnics; i++) {
		ni_nic *n = &ni->nic[i];
		char nm[32];

		snprintf(nm, sizeof(nm), "NIC%u", i);
		if (!n->name && !(n->name = tgi_strdup(nm)))
			return TG_ENOMEM;
		if (!n->pci && !(n->pci = tgi_strdup("")))
			return TG_ENOMEM;
	}
	return TG_OK;
}

/* Islands: connected components of the NVLink graph, numbered by their
 * lowest GPU; the closest NIC of every GPU. */
static void ni_finish(tg_nodeinfo *ni)
{
	unsigned i, j, k;
	uint8_t comp[TG_MAX_GPUS];

	for (i = 0; i < ni->ngpus; i++)
		comp[i] = (uint8_t)i;
	/* a few relaxation passes reach every component (n <= 64) */
	for (k = 0; k < ni->ngpus; k++) {
		bool changed = false;

		for (i = 0; i < ni->ngpus; i++)
			for (j = 0; j < ni->ngpus; j++)
				if (i != j && ni->links[i][j] &&
				    comp[j] < comp[i]) {
					comp[i] = comp[j];
					changed = true;
				}
		if (!changed)
			break;
	}
	ni->nislands = 0;
	for (i = 0; i < ni->ngpus; i++) {
		if (!ni->nvlink_known) {
			ni->island[i] = 0;
			ni->nislands = 1;
			continue;
		}
		if (comp[i] == i)
			ni->island[i] = (uint8_t)ni->nislands++;
		else
			ni->island[i] = ni->island[comp[i]];
	}
	for (i = 0; i < ni->ngpus; i++) {
		ni->gpu[i].nic = -1;
		ni->gpu[i].nic_path = TG_PATH_UNKNOWN;
		for (k = 0; k < ni->nnics; k++) {
			tg_pci_path p = (tg_pci_path)ni->path[i][k];

			if (p == TG_PATH_UNKNOWN)
				continue;
			if (ni->gpu[i].nic < 0 || p < ni->gpu[i].nic_path) {
				ni->gpu[i].nic = (int)k;
				ni->gpu[i].nic_path = p;
			}
		}
	}
}

/* ---- nvidia-smi topo -m ------------------------------------------------- */

/* What the parse has seen so far. */
typedef struct smi_ctx {
	const char *source;
	tg_errinfo *ei;
	unsigned line;
	tg_nodeinfo *ni;
	int col_gpu[NI_MAX_TOKENS];	/* device column -> GPU, -1 */
	int col_nic[NI_MAX_TOKENS];	/* device column -> NIC, -1 */
	int ndev;			/* device columns of the header */
	int ngpu_cols;			/* GPU columns of the header */
	bool have_hdr;			/* the header line was read */
	bool legend;			/* inside the legend (the end) */
	bool row_seen[TG_MAX_GPUS];
} smi_ctx;

static tg_err smi_fail(smi_ctx *c, tg_err err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static tg_err smi_fail(smi_ctx *c, tg_err err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err = tgi_verrf_at(c->ei, err, c->source, c->line, fmt, ap);
	va_end(ap);
	return err;
}

/* Removes ANSI escapes ("\033[4m") in place. */
static void smi_unescape(char *s)
{
	char *w = s;

	while (*s) {
		if (*s == '\033' && s[1] == '[') {
			s += 2;
			while (*s && !((*s >= 'a' && *s <= 'z') ||
				       (*s >= 'A' && *s <= 'Z')))
				s++;
			if (*s)
				s++;
			continue;
		}
		*w++ = *s++;
	}
	*w = '\0';
}

/* Splits on blanks; returns the count, or -1 past \p max. */
static int smi_tokens(char *s, char **tok, int max)
{
	int n = 0;

	for (;;) {
		while (*s == ' ' || *s == '\t' || *s == '\r')
			s++;
		if (!*s)
			return n;
		if (n == max)
			return -1;
		tok[n++] = s;
		while (*s && *s != ' ' && *s != '\t' && *s != '\r')
			s++;
		if (*s)
			*s++ = '\0';
	}
}

/* "GPU12" -> 12; -1 when not that shape. */
static int smi_index(const char *s, const char *prefix)
{
	size_t pl = strlen(prefix);
	unsigned v;

	if (strncmp(s, prefix, pl) != 0 || !s[pl] ||
	    strspn(s + pl, "0123456789") != strlen(s + pl) ||
	    strlen(s + pl) > 4 || !tg_u32_parse(s + pl, &v))
		return -1;
	return (int)v;
}

#define SMI_SELF	100	/* smi_cell(): the "X" on the diagonal */

/* A relation cell: SMI_SELF, -1 = bad, else a tg_pci_path (NV# gives
 * TG_PATH_UNKNOWN and *nv). */
static int smi_cell(const char *s, unsigned *nv)
{
	*nv = 0;
	if (strcmp(s, "X") == 0)
		return SMI_SELF;
	if (strcmp(s, "PIX") == 0)
		return TG_PATH_PIX;
	if (strcmp(s, "PXB") == 0)
		return TG_PATH_PXB;
	if (strcmp(s, "PHB") == 0)
		return TG_PATH_PHB;
	if (strcmp(s, "NODE") == 0)
		return TG_PATH_NODE;
	if (strcmp(s, "SYS") == 0 || strcmp(s, "SOC") == 0)
		return TG_PATH_SYS;
	if (strncmp(s, "NV", 2) == 0 && s[2] &&
	    strspn(s + 2, "0123456789") == strlen(s + 2) &&
	    strlen(s + 2) <= 3 && tg_u32_parse(s + 2, nv) && *nv >= 1 &&
	    *nv <= NI_MAX_LINKS)
		return TG_PATH_UNKNOWN;
	return -1;
}

static bool smi_cpulist(const char *s)
{
	return *s && strspn(s, "0123456789,-") == strlen(s) &&
	       strlen(s) < NI_MAX_STR;
}

static tg_err smi_nomem(smi_ctx *c)
{
	return tgi_errf(c->ei, TG_ENOMEM, "%s: out of memory", c->source);
}

/* "NIC0: mlx5_0" in the NIC legend names NIC column 0. */
static tg_err smi_nic_name(smi_ctx *c, char **tok)
{
	tg_nodeinfo *ni = c->ni;
	int k;

	tok[0][strlen(tok[0]) - 1] = '\0';
	k = smi_index(tok[0], "NIC");
	if (k >= 0 && c->have_hdr && k < (int)ni->nnics &&
	    strlen(tok[1]) <= TG_MAX_NAME) {
		tgi_free(ni->nic[k].name);
		ni->nic[k].name = tgi_strdup(tok[1]);
		if (!ni->nic[k].name)
			return smi_nomem(c);
	}
	return TG_OK;
}

/* One device column of the header: the next GPU, or a NIC. */
static tg_err smi_header_col(smi_ctx *c, int i, const char *tok)
{
	tg_nodeinfo *ni = c->ni;

	c->col_gpu[i] = smi_index(tok, "GPU");
	c->col_nic[i] = -1;
	if (c->col_gpu[i] >= 0) {
		if (c->col_gpu[i] != c->ngpu_cols)
			return smi_fail(c, TG_EPARSE, "header: %s out of "
					"order", tok);
		if (c->ngpu_cols == TG_MAX_GPUS)
			return smi_fail(c, TG_ELIMIT, "more than %d GPUs",
					TG_MAX_GPUS);
		c->ngpu_cols++;
		return TG_OK;
	}
	if (ni->nnics == TG_MAX_NICS)
		return smi_fail(c, TG_ELIMIT, "more than %d NICs",
				TG_MAX_NICS);
	if (strlen(tok) > TG_MAX_NAME)
		return smi_fail(c, TG_ELIMIT, "column name longer than %d "
				"bytes", TG_MAX_NAME);
	c->col_nic[i] = (int)ni->nnics;
	ni->nic[ni->nnics].numa = -1;
	ni->nic[ni->nnics].name = tgi_strdup(tok);
	if (!ni->nic[ni->nnics++].name)
		return smi_nomem(c);
	return TG_OK;
}

/* The header: device columns (GPU0 ...; NICs), then the trailers' names
 * (CPU Affinity, NUMA Affinity, GPU NUMA ID).  Lines before it that do
 * not start with GPU0 are text before the matrix. */
static tg_err smi_header(smi_ctx *c, char **tok, int n)
{
	int i, k;
	tg_err err;

	if (smi_index(tok[0], "GPU") != 0)
		return TG_OK;	/* text before the matrix */
	if (n > 1 && strcmp(tok[1], "X") == 0)
		return smi_fail(c, TG_EPARSE, "a GPU row before the header "
				"line");
	for (i = 0; i < n; i++) {
		if (strcmp(tok[i], "CPU") == 0 ||
		    strcmp(tok[i], "NUMA") == 0 ||
		    strcmp(tok[i], "GPU") == 0)
			break;
		err = smi_header_col(c, i, tok[i]);
		if (err)
			return err;
	}
	c->ndev = i;
	c->ni->ngpus = (unsigned)c->ngpu_cols;
	for (k = 0; k < c->ngpu_cols; k++)
		c->ni->gpu[k].numa = -1;
	c->have_hdr = true;
	return TG_OK;
}

/* The relation cells of GPU row gi: NVLinks to GPUs, PCIe paths to NICs. */
static tg_err smi_cells(smi_ctx *c, int gi, char **tok)
{
	tg_nodeinfo *ni = c->ni;
	int dcol;

	for (dcol = 0; dcol < c->ndev; dcol++) {
		unsigned nv;
		int rel = smi_cell(tok[dcol + 1], &nv);

		if (rel < 0)
			return smi_fail(c, TG_EPARSE, "row %s, column %d: "
					"'%.20s' is not X, NV#, PIX, PXB, "
					"PHB, NODE or SYS", tok[0], dcol + 1,
					tok[dcol + 1]);
		if (c->col_gpu[dcol] >= 0) {
			if ((rel == SMI_SELF) != (c->col_gpu[dcol] == gi))
				return smi_fail(c, TG_EPARSE, "row %s: 'X' "
						"must be on the diagonal",
						tok[0]);
			ni->links[gi][c->col_gpu[dcol]] = (uint16_t)nv;
		} else {
			if (rel == SMI_SELF || nv)
				return smi_fail(c, TG_EPARSE, "row %s: '%s' "
						"for a NIC", tok[0],
						tok[dcol + 1]);
			ni->path[gi][c->col_nic[dcol]] = (uint8_t)rel;
		}
	}
	return TG_OK;
}

/* A GPU row's trailers: CPU affinity, NUMA affinity, GPU NUMA id. */
static tg_err smi_trailers(smi_ctx *c, int gi, char **tok, int n)
{
	ni_gpu *g = &c->ni->gpu[gi];
	int k = c->ndev + 1;
	unsigned v;

	if (k < n && smi_cpulist(tok[k])) {
		g->cpus = tgi_strdup(tok[k]);
		if (!g->cpus)
			return smi_nomem(c);
		k++;
	} else if (k < n && strcmp(tok[k], "N/A") == 0) {
		k++;
	}
	if (k < n && strspn(tok[k], "0123456789") == strlen(tok[k]) &&
	    strlen(tok[k]) <= 4 && tg_u32_parse(tok[k], &v))
		g->numa = (int)v;
	return TG_OK;
}

/* A row after the header: a GPU row (NIC rows say nothing new). */
static tg_err smi_row(smi_ctx *c, char **tok, int n)
{
	int gi = smi_index(tok[0], "GPU");
	tg_err err;

	if (gi < 0) {
		if (smi_index(tok[0], "NIC") >= 0 ||
		    strncmp(tok[0], "mlx", 3) == 0)
			return TG_OK;	/* NIC rows: nothing new */
		return smi_fail(c, TG_EPARSE, "expected a GPU row, got "
				"'%.40s'", tok[0]);
	}
	if (gi >= c->ngpu_cols)
		return smi_fail(c, TG_EPARSE, "row %s but the header has %d "
				"GPUs", tok[0], c->ngpu_cols);
	if (c->row_seen[gi])
		return smi_fail(c, TG_EEXIST, "row %s appears twice", tok[0]);
	c->row_seen[gi] = true;
	if (n < c->ndev + 1)
		return smi_fail(c, TG_EPARSE, "row %s has %d cells; the "
				"header has %d devices (a cut line?)", tok[0],
				n - 1, c->ndev);
	err = smi_cells(c, gi, tok);
	if (!err)
		err = smi_trailers(c, gi, tok, n);
	return err;
}

/* One line (NUL-terminated, modified in place). */
static tg_err smi_line(smi_ctx *c, char *p)
{
	char *tok[NI_MAX_TOKENS];
	int n;

	smi_unescape(p);
	n = smi_tokens(p, tok, NI_MAX_TOKENS);
	if (n < 0)
		return smi_fail(c, TG_ELIMIT, "more than %d columns",
				NI_MAX_TOKENS);
	if (n == 0 || tok[0][0] == '#')
		return TG_OK;
	if (strcmp(tok[0], "Legend:") == 0 || strcmp(tok[0], "NIC") == 0) {
		c->legend = true;
		return TG_OK;
	}
	if (n == 2 && tok[0][strlen(tok[0]) - 1] == ':')
		return smi_nic_name(c, tok);
	if (c->legend)
		return TG_OK;
	if (!c->have_hdr)
		return smi_header(c, tok, n);
	return smi_row(c, tok, n);
}

/* After the last line: a header, a row per GPU, symmetric NVLinks. */
static tg_err smi_check(smi_ctx *c)
{
	const tg_nodeinfo *ni = c->ni;
	int i, j;

	if (!c->have_hdr) {
		c->line = TG_MAX(c->line, 1u);
		return smi_fail(c, TG_EPARSE, "no header line starting with "
				"GPU0: not `nvidia-smi topo -m` output");
	}
	for (i = 0; i < c->ngpu_cols; i++) {
		if (!c->row_seen[i])
			return tgi_errf(c->ei, TG_EPARSE, "%s: no row for "
					"GPU%d (the output is cut short?)",
					c->source, i);
		for (j = 0; j < i; j++)
			if (ni->links[i][j] != ni->links[j][i])
				return tgi_errf(c->ei, TG_EPARSE, "%s: "
						"GPU%d-GPU%d has %u NVLinks "
						"one way and %u the other",
						c->source, i, j,
						ni->links[i][j],
						ni->links[j][i]);
	}
	if (c->ngpu_cols == 0)
		return tgi_errf(c->ei, TG_EPARSE, "%s: no GPU", c->source);
	return TG_OK;
}

/* The lines of \p copy (len bytes, NUL-terminated, cut in place). */
static tg_err smi_lines(smi_ctx *c, char *copy, size_t len)
{
	size_t pos = 0;
	tg_err err;

	while (pos < len) {
		char *p = copy + pos, *nl = memchr(p, '\n', len - pos);
		size_t pl = nl ? (size_t)(nl - p) : len - pos;

		c->line++;
		pos += pl + (nl ? 1 : 0);
		if (pl > NI_MAX_LINE)
			return smi_fail(c, TG_ELIMIT, "line longer than %d "
					"bytes", NI_MAX_LINE);
		if (memchr(p, '\0', pl))
			return smi_fail(c, TG_EPARSE, "NUL byte in the text");
		p[pl] = '\0';
		err = smi_line(c, p);
		if (err)
			return err;
	}
	return smi_check(c);
}

tg_err tg_nodeinfo_parse_nvidia_smi(const char *buf, size_t len,
				    const char *source, tg_nodeinfo **out,
				    tg_errinfo *ei)
{
	char *copy = NULL;
	smi_ctx c;
	tg_err err;

	if (!source)
		source = "nvidia-smi";
	if (!out || (!buf && len))
		return tgi_errf(ei, TG_EINVAL, "%s: bad arguments", source);
	*out = NULL;
	if (len > TG_MAX_FILE)
		return tgi_errf(ei, TG_ELIMIT, "%s: larger than %u bytes",
				source, TG_MAX_FILE);
	memset(&c, 0, sizeof(c));
	c.source = source;
	c.ei = ei;
	c.ni = ni_create("nvidia-smi");
	copy = tgi_malloc(len + 1);
	if (!c.ni || !copy) {
		err = tgi_errf(ei, TG_ENOMEM, "%s: out of memory", source);
		goto fail;
	}
	if (len)
		memcpy(copy, buf, len);
	copy[len] = '\0';
	err = smi_lines(&c, copy, len);
	if (err)
		goto fail;
	c.ni->nvlink_known = true;
	if (ni_strings(c.ni)) {
		err = tgi_errf(ei, TG_ENOMEM, "%s: out of memory", source);
		goto fail;
	}
	ni_finish(c.ni);
	*out = c.ni;
	c.ni = NULL;
fail:
	tgi_free(copy);
	tg_nodeinfo_destroy(c.ni);
	return err;
}

/* ---- hwloc -------------------------------------------------------------- */

bool tg_nodeinfo_have_hwloc(void)
{
#ifdef HAVE_HWLOC
	return true;
#else
	return false;
#endif
}

#ifdef HAVE_HWLOC

/*
 * A copy of an hwloc 3.x XML text that the hwloc 2 library reads: the
 * version attribute says 2.0 and OS-device types are the 2.x enum.
 * Returns NULL (err set) on a bad version.
 */
static char *hw_translate(const char *buf, size_t len, const char *source,
			  tg_errinfo *ei, tg_err *err)
{
	static const char vkey[] = "<topology version=\"";
	static const char okey[] = "osdev_type=\"";
	const char *v = NULL, *p;
	tg_buf b;
	size_t at = 0;
	unsigned major = 2;

	*err = TG_OK;
	/* the root element comes within the first few hundred bytes */
	for (p = buf; p + sizeof(vkey) - 1 <= buf + len &&
		      p < buf + TG_MIN(len, (size_t)4096); p++)
		if (memcmp(p, vkey, sizeof(vkey) - 1) == 0) {
			v = p + sizeof(vkey) - 1;
			break;
		}
	if (v && v < buf + len && *v >= '0' && *v <= '9')
		major = (unsigned)(*v - '0');
	if (v && v + 1 < buf + len && v[1] >= '0' && v[1] <= '9')
		major = 10;
	if (major > 3) {
		*err = tgi_errf(ei, TG_EPARSE, "%s: hwloc XML version %.8s "
				"is not supported (2.x and 3.x are)", source,
				v);
		return NULL;
	}
	tg_buf_init(&b, TG_MAX_FILE + 64);
	if (major < 3) {
		tg_buf_add(&b, buf, len);
		return tg_buf_take(&b);
	}
	tg_buf_add(&b, buf, (size_t)(v - buf));
	tg_buf_add(&b, "2", 1);
	at = (size_t)(v - buf) + 1;
	for (p = buf + at; p + sizeof(okey) - 1 <= buf + len; p++) {
		unsigned long t = 0;
		const char *q;
		unsigned old;
		char nb[8];

		if (memcmp(p, okey, sizeof(okey) - 1) != 0)
			continue;
		q = p + sizeof(okey) - 1;
		while (q < buf + len && *q >= '0' && *q <= '9' &&
		       q - p < 24) {
			t = t * 10 + (unsigned long)(*q - '0');
			q++;
		}
		if (q >= buf + len || *q != '"')
			continue;
		/* 3.x: STORAGE 1, MEMORY 2, GPU 4, COPROC 8, NETWORK 16,
		 * OPENFABRICS 32, DMA 64; 2.x: BLOCK 0, GPU 1, NETWORK 2,
		 * OPENFABRICS 3, DMA 4, COPROC 5 */
		old = t & 4 ? 1 : t & 8 ? 5 : t & 32 ? 3 : t & 16 ? 2 :
		      t & 64 ? 4 : 0;
		tg_buf_add(&b, buf + at,
			    (size_t)(p - buf) + sizeof(okey) - 1 - at);
		snprintf(nb, sizeof(nb), "%u", old);
		tg_buf_adds(&b, nb);
		at = (size_t)(q - buf);
		p = q;
	}
	tg_buf_add(&b, buf + at, len - at);
	if (b.err) {
		*err = tgi_errf(ei, b.err, "%s: out of memory", source);
		tg_buf_free(&b);
		return NULL;
	}
	return tg_buf_take(&b);
}

static void hw_pcikey(hwloc_obj_t o, unsigned *k)
{
	k[0] = o->attr->pcidev.domain;
	k[1] = o->attr->pcidev.bus;
	k[2] = o->attr->pcidev.dev;
	k[3] = o->attr->pcidev.func;
}

static int key_cmp(const unsigned *a, const unsigned *b)
{
	int i;

	for (i = 0; i < 4; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

static int gpu_cmp(const void *a, const void *b)
{
	return key_cmp(((const ni_gpu *)a)->pcikey,
		       ((const ni_gpu *)b)->pcikey);
}

static int nic_cmp(const void *a, const void *b)
{
	return key_cmp(((const ni_nic *)a)->pcikey,
		       ((const ni_nic *)b)->pcikey);
}

static char *hw_busid(hwloc_obj_t o)
{
	char s[32];

	snprintf(s, sizeof(s), "%04x:%02x:%02x.%01x",
		 (unsigned)o->attr->pcidev.domain,
		 (unsigned)o->attr->pcidev.bus, (unsigned)o->attr->pcidev.dev,
		 (unsigned)o->attr->pcidev.func);
	return tgi_strdup(s);
}

static bool hw_is_nvswitch(hwloc_obj_t o)
{
	return o->type == HWLOC_OBJ_PCI_DEVICE && o->subtype &&
	       strcmp(o->subtype, "NVSwitch") == 0;
}

/* An OS device below a PCI device that makes it a GPU. */
static bool hw_gpu_osdev(hwloc_obj_t o)
{
	if (o->attr->osdev.type == HWLOC_OBJ_OSDEV_COPROC)
		return true;
	if (o->attr->osdev.type != HWLOC_OBJ_OSDEV_GPU || !o->name)
		return false;
	return strncmp(o->name, "nvml", 4) == 0 ||
	       strncmp(o->name, "cuda", 4) == 0 ||
	       strncmp(o->name, "rsmi", 4) == 0;
}

static bool hw_is_gpu(hwloc_obj_t o)
{
	hwloc_obj_t c;
	unsigned cls = o->attr->pcidev.class_id >> 8;

	if (hw_is_nvswitch(o))
		return false;
	for (c = o->io_first_child; c; c = c->next_sibling)
		if (c->type == HWLOC_OBJ_OS_DEVICE && hw_gpu_osdev(c))
			return true;
	return o->attr->pcidev.vendor_id == 0x10de && cls == 0x03;
}

static bool hw_is_nic(hwloc_obj_t o, const char **name)
{
	hwloc_obj_t c;
	bool net = (o->attr->pcidev.class_id >> 8) == 0x02;

	*name = NULL;
	for (c = o->io_first_child; c; c = c->next_sibling) {
		if (c->type != HWLOC_OBJ_OS_DEVICE)
			continue;
		if (c->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS &&
		    c->name) {
			*name = c->name;
			return true;
		}
		if (c->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK) {
			if (!*name && c->name)
				*name = c->name;
			net = true;
		}
	}
	return net;
}

/* Locality of an I/O object: NUMA node, CPU list, core list. */
static tg_err hw_locality(hwloc_topology_t topo, hwloc_obj_t o, int *numa,
			  char **cpus, char **cores)
{
	hwloc_obj_t a = hwloc_get_non_io_ancestor_obj(topo, o), c = NULL;
	char buf[NI_MAX_STR];
	tg_buf b;
	int prev = -2, start = -1;

	*numa = -1;
	*cpus = *cores = NULL;
	if (!a)
		return TG_OK;
	if (a->nodeset && hwloc_bitmap_weight(a->nodeset) == 1)
		*numa = hwloc_bitmap_first(a->nodeset);
	if (a->cpuset && hwloc_bitmap_list_snprintf(buf, sizeof(buf),
						     a->cpuset) <
	    (int)sizeof(buf)) {
		*cpus = tgi_strdup(buf);
		if (!*cpus)
			return TG_ENOMEM;
	}
	tg_buf_init(&b, NI_MAX_STR);
	while (a->cpuset &&
	       (c = hwloc_get_next_obj_inside_cpuset_by_type(topo, a->cpuset,
							     HWLOC_OBJ_CORE,
							     c))) {
		int li = (int)c->logical_index;

		if (li == prev + 1) {
			prev = li;
			continue;
		}
		if (start >= 0)
			tg_buf_addf(&b, start == prev ? "%s%d" : "%s%d-%d",
				     b.len ? "," : "", start, prev);
		start = prev = li;
	}
	if (start >= 0)
		tg_buf_addf(&b, start == prev ? "%s%d" : "%s%d-%d",
			     b.len ? "," : "", start, prev);
	if (b.err == TG_ELIMIT) {
		tg_buf_free(&b);
		return TG_OK;	/* too long to be useful: unknown */
	}
	*cores = tg_buf_take(&b);
	return *cores ? TG_OK : TG_ENOMEM;
}

/* The PCIe path between two I/O objects, as nvidia-smi names it. */
static tg_pci_path hw_path(hwloc_topology_t topo, hwloc_obj_t x,
			   hwloc_obj_t y)
{
	hwloc_obj_t c = hwloc_get_common_ancestor_obj(topo, x, y), o;
	unsigned dx = 0, dy = 0;

	if (!c)
		return TG_PATH_UNKNOWN;
	if (c->type == HWLOC_OBJ_BRIDGE) {
		if (c->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST)
			return TG_PATH_PHB;
		for (o = x->parent; o && o != c; o = o->parent)
			dx += o->type == HWLOC_OBJ_BRIDGE;
		for (o = y->parent; o && o != c; o = o->parent)
			dy += o->type == HWLOC_OBJ_BRIDGE;
		/* one PCIe switch: device - downstream port - upstream */
		return dx <= 1 && dy <= 1 ? TG_PATH_PIX : TG_PATH_PXB;
	}
	if (c->type == HWLOC_OBJ_PCI_DEVICE || c->type == HWLOC_OBJ_OS_DEVICE)
		return TG_PATH_PIX;
	if (c->nodeset && hwloc_bitmap_weight(c->nodeset) == 1)
		return TG_PATH_NODE;
	return TG_PATH_SYS;
}

/* The GPU a distances-matrix object stands for, -1 if none. */
static int hw_gpu_of(const tg_nodeinfo *ni, hwloc_obj_t o)
{
	unsigned i;

	if (o->type == HWLOC_OBJ_OS_DEVICE)
		o = o->parent;
	for (i = 0; i < ni->ngpus; i++)
		if (ni->gpu[i].obj == (void *)o)
			return (int)i;
	return -1;
}

/* NVLink counts from the "NVLinkBandwidth" matrix (see discover.h). */
static tg_err hw_nvlink(hwloc_topology_t topo, tg_nodeinfo *ni)
{
	struct hwloc_distances_s *d = NULL;
	unsigned nr = 1, n, i, j, k;
	int *gi = NULL, *sc = NULL;
	uint64_t unit = 0, v;
	bool m25 = true, m20 = true;
	unsigned (*sw)[TG_MAX_GPUS] = NULL;	/* [component][gpu] */
	unsigned ncomp = 0;
	tg_err err = TG_ENOMEM;

	if (hwloc_distances_get_by_name(topo, "NVLinkBandwidth", &nr, &d,
					0) != 0 || nr < 1) {
		ni->nvlink_known = false;
		return TG_OK;
	}
	n = d->nbobjs;
	if (n > NI_MAX_HWOBJS) {
		hwloc_distances_release(topo, d);
		ni->nvlink_known = false;
		return TG_OK;
	}
	ni->nvlink_known = true;
	gi = tgi_malloc((n + 1) * sizeof(int));
	sc = tgi_malloc((n + 1) * sizeof(int));
	if (!gi || !sc)
		goto out;
	for (i = 0; i < n; i++) {
		gi[i] = d->objs[i] ? hw_gpu_of(ni, d->objs[i]) : -1;
		sc[i] = d->objs[i] && hw_is_nvswitch(d->objs[i]) ? 0 : -1;
	}
	/* the bandwidth of one link */
	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++) {
			v = d->values[(size_t)i * n + j];
			if (i == j || !v || (gi[i] < 0 && gi[j] < 0))
				continue;
			if (!(gi[i] >= 0 || sc[i] == 0) ||
			    !(gi[j] >= 0 || sc[j] == 0))
				continue;	/* GPU-CPU links */
			m25 = m25 && v % 25000 == 0;
			m20 = m20 && v % 20000 == 0;
			if (!unit || v < unit)
				unit = v;
		}
	if (m25)
		unit = 25000;
	else if (m20)
		unit = 20000;
	if (!unit)
		unit = 1;
	/* switch components: switches joined by switch-switch links */
	for (i = 0; i < n; i++) {
		if (sc[i] != 0)
			continue;
		sc[i] = (int)++ncomp;
		for (k = 0; k < n; k++)	/* flood fill, n is small */
			for (j = 0; j < n; j++) {
				unsigned a;

				if (sc[j] != 0)
					continue;
				for (a = 0; a < n; a++)
					if (sc[a] == (int)ncomp &&
					    (d->values[(size_t)a * n + j] ||
					     d->values[(size_t)j * n + a])) {
						sc[j] = (int)ncomp;
						break;
					}
			}
	}
	sw = tgi_calloc((size_t)ncomp + 1, sizeof(*sw));
	if (!sw)
		goto out;
	for (i = 0; i < n; i++) {
		if (gi[i] < 0)
			continue;
		for (j = 0; j < n; j++) {
			uint64_t l;

			v = TG_MAX(d->values[(size_t)i * n + j],
				   d->values[(size_t)j * n + i]);
			if (i == j || !v)
				continue;
			l = (v + unit - 1) / unit;
			if (l > NI_MAX_LINKS)
				l = NI_MAX_LINKS;
			if (gi[j] >= 0)
				ni->links[gi[i]][gi[j]] = (uint16_t)l;
			else if (sc[j] > 0)
				sw[sc[j]][gi[i]] += (unsigned)l;
		}
	}
	for (k = 1; k <= ncomp; k++)
		for (i = 0; i < ni->ngpus; i++)
			for (j = 0; j < ni->ngpus; j++) {
				unsigned l = TG_MIN(sw[k][i], sw[k][j]);

				if (i != j && l)
					ni->links[i][j] = (uint16_t)TG_MIN(
						ni->links[i][j] + l,
						(unsigned)NI_MAX_LINKS);
			}
	err = TG_OK;
out:
	tgi_free(gi);
	tgi_free(sc);
	tgi_free(sw);
	hwloc_distances_release(topo, d);
	return err;
}

static tg_err hw_extract(hwloc_topology_t topo, tg_nodeinfo *ni,
			 const char *source, tg_errinfo *ei)
{
	hwloc_obj_t o = NULL;
	unsigned i, k;
	tg_err err;

	while ((o = hwloc_get_next_pcidev(topo, o))) {
		const char *nicname;

		if (hw_is_gpu(o)) {
			ni_gpu *g;
			hwloc_obj_t c;

			if (ni->ngpus == TG_MAX_GPUS)
				return tgi_errf(ei, TG_ELIMIT, "%s: more than "
						"%d GPUs", source,
						TG_MAX_GPUS);
			g = &ni->gpu[ni->ngpus++];
			g->obj = o;
			hw_pcikey(o, g->pcikey);
			for (c = o->io_first_child; c; c = c->next_sibling) {
				const char *m;

				if (c->type != HWLOC_OBJ_OS_DEVICE)
					continue;
				m = hwloc_obj_get_info_by_name(c, "GPUModel");
				if (m && !g->model &&
				    strlen(m) < NI_MAX_STR &&
				    !(g->model = tgi_strdup(m)))
					return tgi_errf(ei, TG_ENOMEM, "%s: "
							"out of memory",
							source);
			}
			if (!(g->pci = hw_busid(o)) ||
			    hw_locality(topo, o, &g->numa, &g->cpus,
					&g->cores))
				return tgi_errf(ei, TG_ENOMEM, "%s: out of "
						"memory", source);
		} else if (hw_is_nic(o, &nicname)) {
			ni_nic *nc;
			char *cpus = NULL, *cores = NULL;

			if (ni->nnics == TG_MAX_NICS)
				continue;	/* the closest ones suffice */
			nc = &ni->nic[ni->nnics++];
			nc->obj = o;
			hw_pcikey(o, nc->pcikey);
			if (nicname && strlen(nicname) <= TG_MAX_NAME &&
			    !(nc->name = tgi_strdup(nicname)))
				return tgi_errf(ei, TG_ENOMEM, "%s: out of "
						"memory", source);
			err = hw_locality(topo, o, &nc->numa, &cpus, &cores);
			tgi_free(cpus);
			tgi_free(cores);
			if (err || !(nc->pci = hw_busid(o)))
				return tgi_errf(ei, TG_ENOMEM, "%s: out of "
						"memory", source);
		}
	}
	qsort(ni->gpu, ni->ngpus, sizeof(ni_gpu), gpu_cmp);
	qsort(ni->nic, ni->nnics, sizeof(ni_nic), nic_cmp);
	for (i = 0; i < ni->ngpus; i++)
		for (k = 0; k < ni->nnics; k++)
			ni->path[i][k] = (uint8_t)hw_path(topo, ni->gpu[i].obj,
							  ni->nic[k].obj);
	if (hw_nvlink(topo, ni))
		return tgi_errf(ei, TG_ENOMEM, "%s: out of memory", source);
	for (i = 0; i < ni->ngpus; i++)
		ni->gpu[i].obj = NULL;
	for (i = 0; i < ni->nnics; i++)
		ni->nic[i].obj = NULL;
	if (ni_strings(ni))
		return tgi_errf(ei, TG_ENOMEM, "%s: out of memory", source);
	ni_finish(ni);
	return TG_OK;
}

/*
 * Whether \p buf ends with the root's closing tag (blanks may follow).
 * hwloc always writes it; a file without it is cut short.  hwloc's
 * built-in XML reader (used when libhwloc-plugins is not installed)
 * accepts some such cuts and leaks on others, so they are refused here,
 * the same way whichever reader hwloc has.
 */
static bool hw_closed(const char *buf, size_t len)
{
	static const char tail[] = "</topology>";

	while (len && (buf[len - 1] == ' ' || buf[len - 1] == '\t' ||
		       buf[len - 1] == '\n' || buf[len - 1] == '\r'))
		len--;
	return len >= sizeof(tail) - 1 &&
	       memcmp(buf + len - (sizeof(tail) - 1), tail,
		      sizeof(tail) - 1) == 0;
}

/* Loads \p xml (NULL: this host) and extracts the node. */
static tg_err hw_load(const char *xml, size_t len, const char *source,
		      const char *kind, tg_nodeinfo **out, tg_errinfo *ei)
{
	hwloc_topology_t topo;
	tg_nodeinfo *ni;
	tg_err err;

	if (hwloc_topology_init(&topo) != 0)
		return tgi_errf(ei, TG_ENOMEM, "%s: hwloc cannot start",
				source);
	hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_ALL);
#if defined(__linux__) && HWLOC_API_VERSION >= 0x00020100
	/* Linux's sysfs backend finds the PCI devices itself; the
	 * libpciaccess component adds nothing and leaks about 1 KiB per
	 * load (hwloc 2.9 with libpciaccess 0.17). */
	if (!xml)
		hwloc_topology_set_components(topo,
			HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "pci");
#endif
	if (xml && hwloc_topology_set_xmlbuffer(topo, xml,
						(int)len + 1) != 0) {
		hwloc_topology_destroy(topo);
		return tgi_errf(ei, TG_EPARSE, "%s: hwloc does not accept "
				"this XML", source);
	}
	if (hwloc_topology_load(topo) != 0) {
		hwloc_topology_destroy(topo);
		return tgi_errf(ei, TG_EPARSE, "%s: hwloc cannot load %s: "
				"malformed or truncated XML?", source,
				xml ? "the XML" : "this host's topology");
	}
	ni = ni_create(kind);
	if (!ni) {
		hwloc_topology_destroy(topo);
		return tgi_errf(ei, TG_ENOMEM, "%s: out of memory", source);
	}
	err = hw_extract(topo, ni, source, ei);
	hwloc_topology_destroy(topo);
	if (err) {
		tg_nodeinfo_destroy(ni);
		return err;
	}
	*out = ni;
	return TG_OK;
}

#endif /* HAVE_HWLOC */

tg_err tg_nodeinfo_load_hwloc_xml(const char *buf, size_t len,
				  const char *source, tg_nodeinfo **out,
				  tg_errinfo *ei)
{
#ifdef HAVE_HWLOC
	char *xml;
	tg_err err;
#endif

	if (!source)
		source = "hwloc.xml";
	if (!out || (!buf && len))
		return tgi_errf(ei, TG_EINVAL, "%s: bad arguments", source);
	*out = NULL;
#ifdef HAVE_HWLOC
	if (len > TG_MAX_FILE || len >= INT_MAX - 64)
		return tgi_errf(ei, TG_ELIMIT, "%s: larger than %u bytes",
				source, TG_MAX_FILE);
	if (len == 0 || memchr(buf, '\0', len))
		return tgi_errf(ei, TG_EPARSE, "%s: %s", source, len ?
				"NUL byte in the XML" : "empty file");
	if (!hw_closed(buf, len))
		return tgi_errf(ei, TG_EPARSE, "%s: hwloc XML cut short: it "
				"does not end with </topology>", source);
	xml = hw_translate(buf, len, source, ei, &err);
	if (!xml)
		return err ? err : tgi_errf(ei, TG_ENOMEM, "%s: out of "
					     "memory", source);
	err = hw_load(xml, strlen(xml), source, "hwloc-xml", out, ei);
	tgi_free(xml);
	return err;
#else
	return tgi_errf(ei, TG_ENOENT, "%s: built without hwloc (install "
			"libhwloc-dev and reconfigure)", source);
#endif
}

tg_err tg_nodeinfo_load_hwloc_file(const char *path, tg_nodeinfo **out,
				   tg_errinfo *ei)
{
	char *buf = NULL;
	size_t len = 0;
	tg_err err;

	if (!path || !out)
		return tgi_errf(ei, TG_EINVAL, "tg_nodeinfo_load_hwloc_file: "
				"NULL");
	*out = NULL;
	if (!tg_nodeinfo_have_hwloc())
		return tg_nodeinfo_load_hwloc_xml(NULL, 0, path, out, ei);
	err = tgi_read_file(path, &buf, &len, ei);
	if (err)
		return err;
	err = tg_nodeinfo_load_hwloc_xml(buf, len, path, out, ei);
	tgi_free(buf);
	return err;
}

tg_err tg_nodeinfo_discover(tg_nodeinfo **out, tg_errinfo *ei)
{
	if (!out)
		return tgi_errf(ei, TG_EINVAL, "tg_nodeinfo_discover: NULL");
	*out = NULL;
#ifdef HAVE_HWLOC
	return hw_load(NULL, 0, "this host", "hwloc", out, ei);
#else
	return tgi_errf(ei, TG_ENOENT, "this host: built without hwloc "
			"(install libhwloc-dev and reconfigure, or give "
			"--nvidia-smi FILE)");
#endif
}

/* ---- accessors ---------------------------------------------------------- */

const char *tg_nodeinfo_source(const tg_nodeinfo *ni)
{
	return ni ? ni->source : "";
}

unsigned tg_nodeinfo_ngpus(const tg_nodeinfo *ni)
{
	return ni ? ni->ngpus : 0;
}

unsigned tg_nodeinfo_nnics(const tg_nodeinfo *ni)
{
	return ni ? ni->nnics : 0;
}

tg_err tg_nodeinfo_gpu(const tg_nodeinfo *ni, unsigned i, tg_gpuinfo *g)
{
	const ni_gpu *s;

	if (!ni || !g || i >= ni->ngpus)
		return TG_ENOENT;
	s = &ni->gpu[i];
	g->name = s->name;
	g->model = s->model;
	g->pci = s->pci;
	g->cpus = s->cpus;
	g->cores = s->cores;
	g->numa = s->numa;
	g->island = ni->island[i];
	g->nic = s->nic;
	g->nic_path = s->nic_path;
	return TG_OK;
}

tg_err tg_nodeinfo_nic(const tg_nodeinfo *ni, unsigned i, tg_nicinfo *n)
{
	if (!ni || !n || i >= ni->nnics)
		return TG_ENOENT;
	n->name = ni->nic[i].name;
	n->pci = ni->nic[i].pci;
	n->numa = ni->nic[i].numa;
	return TG_OK;
}

unsigned tg_nodeinfo_links(const tg_nodeinfo *ni, unsigned i, unsigned j)
{
	if (!ni || i >= ni->ngpus || j >= ni->ngpus || i == j)
		return 0;
	return ni->links[i][j];
}

bool tg_nodeinfo_nvlink_known(const tg_nodeinfo *ni)
{
	return ni && ni->nvlink_known;
}

unsigned tg_nodeinfo_nislands(const tg_nodeinfo *ni)
{
	return ni ? ni->nislands : 0;
}

const uint8_t *tg_nodeinfo_islands(const tg_nodeinfo *ni)
{
	return ni ? ni->island : NULL;
}

tg_err tg_nodeinfo_merge_nvlink(tg_nodeinfo *dst, const tg_nodeinfo *src,
				tg_errinfo *ei)
{
	if (!dst || !src)
		return tgi_errf(ei, TG_EINVAL, "tg_nodeinfo_merge_nvlink: "
				"NULL");
	if (!src->nvlink_known)
		return tgi_errf(ei, TG_EINVAL, "%s knows no NVLink",
				src->source);
	if (src->ngpus != dst->ngpus)
		return tgi_errf(ei, TG_EINVAL, "%s sees %u GPU%s, %s %u: "
				"not the same GPUs", src->source, src->ngpus,
				src->ngpus == 1 ? "" : "s", dst->source,
				dst->ngpus);
	memcpy(dst->links, src->links, sizeof(dst->links));
	dst->nvlink_known = true;
	ni_finish(dst);
	return TG_OK;
}

tg_err tg_nodeinfo_apply(const tg_nodeinfo *ni, tg_topology *t,
			 tg_node_id n)
{
	if (!ni || !t)
		return TG_EINVAL;
	return tg_topology_node_set_gpus(t, n, ni->ngpus,
					 ni->nvlink_known ? ni->island : NULL);
}

/* ---- writers ------------------------------------------------------------ */

static const char *path_name(tg_pci_path p)
{
	static const char *const names[] = {
		"", "PIX", "PXB", "PHB", "NODE", "SYS"
	};

	return (unsigned)p < sizeof(names) / sizeof(names[0]) ?
		names[p] : "";
}

static void ni_json_str(tg_buf *b, const char *s)
{
	tg_buf_add_json(b, s);
}

/* "0-3_6.4-5_7": island GPU lists as ranges ('_' between ranges, '.'
 * between islands). */
static void ni_layout(const tg_nodeinfo *ni, tg_buf *b)
{
	unsigned is, i;

	for (is = 0; is < ni->nislands; is++) {
		int start = -1, prev = -2;
		bool first = true;

		if (is)
			tg_buf_add(b, ".", 1);
		for (i = 0; i <= ni->ngpus; i++) {
			bool in = i < ni->ngpus && ni->island[i] == is;

			if (in && (int)i == prev + 1) {
				prev = (int)i;
				continue;
			}
			if (start >= 0 && (!in || (int)i != prev + 1)) {
				tg_buf_addf(b, start == prev ? "%s%d" :
					     "%s%d-%d", first ? "" : "_",
					     start, prev);
				first = false;
				start = -1;
			}
			if (in)
				start = prev = (int)i;
		}
	}
}

static unsigned ni_largest(const tg_nodeinfo *ni)
{
	unsigned cnt[TG_MAX_GPUS] = { 0 }, i, best = 0;

	for (i = 0; i < ni->ngpus; i++)
		if (++cnt[ni->island[i]] > best)
			best = cnt[ni->island[i]];
	return best;
}

static void ni_json(const tg_nodeinfo *ni, const char *node, tg_buf *b,
		    bool compact)
{
	const char *nl = compact ? "" : "\n  ";
	const char *sp = compact ? "" : " ";
	unsigned i, j;

	tg_buf_adds(b, "{");
	if (!compact) {
		tg_buf_adds(b, "\"node\": ");
		ni_json_str(b, node ? node : "");
		tg_buf_adds(b, ", \"source\": ");
		ni_json_str(b, ni->source);
		tg_buf_adds(b, ",");
	}
	tg_buf_addf(b, "%s\"gpus\":%s[", nl, sp);
	for (i = 0; i < ni->ngpus; i++) {
		const ni_gpu *g = &ni->gpu[i];

		tg_buf_addf(b, "%s%s{\"index\":%s%u,%s\"pci\":%s",
			     i ? "," : "", compact ? "" : "\n    ", sp, i, sp,
			     sp);
		ni_json_str(b, g->pci);
		if (!compact) {
			tg_buf_adds(b, ", \"model\": ");
			ni_json_str(b, g->model);
			tg_buf_adds(b, ", \"cpus\": ");
			ni_json_str(b, g->cpus);
			tg_buf_adds(b, ", \"cores\": ");
			ni_json_str(b, g->cores);
		}
		tg_buf_addf(b, ",%s\"numa\":%s%d,%s\"island\":%s%u", sp, sp,
			     g->numa, sp, sp, ni->island[i]);
		tg_buf_addf(b, ",%s\"nic\":%s", sp, sp);
		if (g->nic >= 0) {
			ni_json_str(b, ni->nic[g->nic].name);
			tg_buf_addf(b, ",%s\"nic_path\":%s", sp, sp);
			ni_json_str(b, path_name(g->nic_path));
		} else {
			tg_buf_adds(b, "null");
		}
		tg_buf_adds(b, "}");
	}
	tg_buf_addf(b, "],%s\"nvlink\":%s", nl, sp);
	if (!ni->nvlink_known) {
		tg_buf_adds(b, "null");
	} else {
		tg_buf_add(b, "[", 1);
		for (i = 0; i < ni->ngpus; i++) {
			tg_buf_addf(b, "%s%s[", i ? "," : "",
				     compact ? "" : "\n    ");
			for (j = 0; j < ni->ngpus; j++)
				tg_buf_addf(b, "%s%u", j ? "," : "",
					     ni->links[i][j]);
			tg_buf_add(b, "]", 1);
		}
		tg_buf_add(b, "]", 1);
	}
	tg_buf_addf(b, ",%s\"islands\":%s", nl, sp);
	if (ni->nvlink_known) {
		tg_buf_add(b, "\"", 1);
		ni_layout(ni, b);
		tg_buf_add(b, "\"", 1);
	} else {
		tg_buf_adds(b, "null");
	}
	if (!compact) {
		tg_buf_addf(b, ",%s\"nics\": [", nl);
		for (i = 0; i < ni->nnics; i++) {
			tg_buf_addf(b, "%s\n    {\"index\": %u, \"name\": ",
				     i ? "," : "", i);
			ni_json_str(b, ni->nic[i].name);
			tg_buf_adds(b, ", \"pci\": ");
			ni_json_str(b, ni->nic[i].pci);
			tg_buf_addf(b, ", \"numa\": %d}", ni->nic[i].numa);
		}
		tg_buf_adds(b, "]");
	}
	tg_buf_adds(b, compact ? "}" : "\n}\n");
}


static void ni_labels(const tg_nodeinfo *ni, const char *node, tg_buf *b)
{
	tg_buf lay, ann;
	char *s;

	tg_buf_adds(b, "kubectl label node ");
	tgi_buf_shell(b, "._-/=:", node);
	tg_buf_addf(b, " --overwrite " TG_LABEL_GPU_COUNT "=%u", ni->ngpus);
	if (ni->nvlink_known && ni->ngpus) {
		tg_buf_init(&lay, 64);
		ni_layout(ni, &lay);
		s = tg_buf_take(&lay);
		if (s && strlen(s) <= 63)
			tg_buf_addf(b, " " TG_LABEL_NVLINK_ISLANDS "=%s", s);
		tgi_free(s);
		tg_buf_addf(b, " " TG_LABEL_ISLAND_SIZE "=%u",
			     ni_largest(ni));
	}
	tg_buf_adds(b, "\nkubectl annotate node ");
	tgi_buf_shell(b, "._-/=:", node);
	tg_buf_adds(b, " --overwrite ");
	tg_buf_init(&ann, TG_MAX_FILE);
	tg_buf_adds(&ann, TG_ANNOT_GPU_TOPOLOGY "=");
	ni_json(ni, node, &ann, true);
	s = tg_buf_take(&ann);
	if (!s) {
		b->err = TG_ENOMEM;
		return;
	}
	tgi_buf_shell(b, "._-/=:", s);
	tgi_free(s);
	tg_buf_add(b, "\n", 1);
}

/* The labels and the annotation of ni_labels() as one JSON merge patch
 * of the Node: {"metadata": {"labels": {...}, "annotations": {...}}}. */
static void ni_patch(const tg_nodeinfo *ni, tg_buf *b)
{
	tg_buf lay, ann;
	char *s;

	tg_buf_addf(b, "{\"metadata\": {\"labels\": {\""
		     TG_LABEL_GPU_COUNT "\": \"%u\"", ni->ngpus);
	if (ni->nvlink_known && ni->ngpus) {
		tg_buf_init(&lay, 64);
		ni_layout(ni, &lay);
		s = tg_buf_take(&lay);
		if (s && strlen(s) <= 63)
			tg_buf_addf(b, ", \"" TG_LABEL_NVLINK_ISLANDS
				     "\": \"%s\"", s);
		tgi_free(s);
		tg_buf_addf(b, ", \"" TG_LABEL_ISLAND_SIZE "\": \"%u\"",
			     ni_largest(ni));
	}
	tg_buf_adds(b, "}, \"annotations\": {\"" TG_ANNOT_GPU_TOPOLOGY
		     "\": ");
	tg_buf_init(&ann, TG_MAX_FILE);
	ni_json(ni, NULL, &ann, true);
	s = tg_buf_take(&ann);
	if (!s) {
		b->err = TG_ENOMEM;
		return;
	}
	ni_json_str(b, s);
	tgi_free(s);
	tg_buf_adds(b, "}}}\n");
}

/* "Tesla V100-SXM3-32GB-H" -> "v100-sxm3-32gb-h". */
static void ni_type(const char *model, char *out, size_t cap)
{
	static const char *const drop[] = { "nvidia ", "tesla " };
	size_t k = 0, i;
	const char *p = model;
	bool again = true;

	while (again) {
		again = false;
		for (i = 0; i < sizeof(drop) / sizeof(drop[0]); i++) {
			size_t n = strlen(drop[i]), j;

			for (j = 0; j < n && p[j]; j++) {
				char ch = p[j];

				if (ch >= 'A' && ch <= 'Z')
					ch = (char)(ch - 'A' + 'a');
				if (ch != drop[i][j])
					break;
			}
			if (j == n) {
				p += n;
				again = true;
			}
		}
	}
	for (; *p && k + 1 < cap; p++) {
		char ch = *p;

		if (ch >= 'A' && ch <= 'Z')
			ch = (char)(ch - 'A' + 'a');
		if (ch == ' ')
			ch = '_';
		if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
		      ch == '-' || ch == '_' || ch == '.'))
			continue;
		out[k++] = ch;
	}
	out[k] = '\0';
}

static void ni_gres(const tg_nodeinfo *ni, const char *node, tg_buf *b)
{
	unsigned i, j;

	tg_buf_addf(b, "# gres.conf for %s written by topogang (%s): %u "
		     "GPU%s", node, ni->source, ni->ngpus,
		     ni->ngpus == 1 ? "" : "s");
	if (ni->nvlink_known) {
		tg_buf_adds(b, ", NVLink islands ");
		ni_layout(ni, b);
	} else {
		tg_buf_adds(b, ", NVLink unknown (no Links=)");
	}
	tg_buf_add(b, "\n", 1);
	for (i = 0; i < ni->ngpus; i++) {
		const ni_gpu *g = &ni->gpu[i];
		char type[128];

		tg_buf_addf(b, "NodeName=%s Name=gpu", node);
		ni_type(g->model, type, sizeof(type));
		if (type[0])
			tg_buf_addf(b, " Type=%s", type);
		tg_buf_addf(b, " File=/dev/nvidia%u", i);
		if (g->cores[0])
			tg_buf_addf(b, " Cores=%s", g->cores);
		if (ni->nvlink_known) {
			tg_buf_adds(b, " Links=");
			for (j = 0; j < ni->ngpus; j++)
				tg_buf_addf(b, j ? ",%d" : "%d", i == j ? -1 :
					     (int)ni->links[i][j]);
		}
		tg_buf_add(b, "\n", 1);
	}
}

/* A Slurm/Kubernetes node name the writers can put on a command line. */
static bool ni_node_ok(const char *s)
{
	size_t n = strlen(s), i;

	if (!n || n > TG_MAX_NAME)
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '-' ||
		      s[i] == '.' || s[i] == '_'))
			return false;
	return true;
}

tg_err tg_nodeinfo_export(const tg_nodeinfo *ni, tg_nodeinfo_format fmt,
			  const char *node, char **out, tg_errinfo *ei)
{
	tg_buf b;

	if (!out)
		return tgi_errf(ei, TG_EINVAL, "tg_nodeinfo_export: NULL");
	*out = NULL;
	if (!ni)
		return tgi_errf(ei, TG_EINVAL, "tg_nodeinfo_export: NULL");
	if (fmt != TG_NODEINFO_JSON && (!node || !ni_node_ok(node)))
		return tgi_errf(ei, TG_EINVAL, "node name '%.60s': expected "
				"1 to %d of [A-Za-z0-9._-]", node ? node : "",
				TG_MAX_NAME);
	tg_buf_init(&b, TG_MAX_FILE);
	switch (fmt) {
	case TG_NODEINFO_JSON:
		ni_json(ni, node, &b, false);
		break;
	case TG_NODEINFO_LABELS:
		ni_labels(ni, node, &b);
		break;
	case TG_NODEINFO_GRES:
		ni_gres(ni, node, &b);
		break;
	case TG_NODEINFO_PATCH:
		ni_patch(ni, &b);
		break;
	default:
		return tgi_errf(ei, TG_EINVAL, "tg_nodeinfo_export: unknown "
				"format %d", (int)fmt);
	}
	if (b.err) {
		tg_err err = b.err;

		tg_buf_free(&b);
		return tgi_errf(ei, err, "out of memory writing the node");
	}
	*out = tg_buf_take(&b);
	return *out ? TG_OK : tgi_errf(ei, TG_ENOMEM, "out of memory");
}
