/*
 * tests/unit/test_discover.c - what is inside one node: `nvidia-smi topo
 * -m` text, hwloc XML exports (DGX-2H with NVSwitches, POWER8 with an
 * NVLink bandwidth matrix, a hand-written PCIe layout), the live host,
 * and the JSON / label / gres.conf writers.
 *
 * hwloc cases print "# SKIP" when the library was built without hwloc.
 * Expected gres.conf lines are in tests/data/discover/expected
 * (TG_REGEN=1 rewrites them).
 */
#define _POSIX_C_SOURCE 200809L	/* fork, setenv, waitpid */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cJSON.h>

#include "topogang/topogang.h"
#include "tap.h"
#include "oom.h"
#include "testdata.h"

/* the inputs, in tests/data/discover */
#define SMI_HGX "nvidia_smi_topo_hgx_h100_8gpu.txt"
#define XML_POWER8 "hwloc_power8_4gpu_nvlink_distances.xml"
#define XML_DGX2H "hwloc_nvidia_dgx2h_16gpu_12nvswitch.xml"
#define XML_SYNTH "hwloc_synthetic_gpu_nic_pcie_switch.xml"
/* captured on a real H200 VM (tests/data/discover/README.md) */
#define SMI_H200 "nvidia_smi_topo_h200_1gpu_vm.txt"
#define XML_H200 "hwloc_h200_1gpu_vm.xml"

static void skip(unsigned n, const char *why)
{
	unsigned i;

	for (i = 0; i < n; i++)
		ok(1, "# SKIP %s", why);
}

static tg_nodeinfo *smi(const char *text, tg_err want, const char *what,
			char *msg, size_t msglen)
{
	tg_nodeinfo *ni = NULL;
	tg_errinfo ei = { "" };
	tg_err err = tg_nodeinfo_parse_nvidia_smi(text, strlen(text),
						  "topo.txt", &ni, &ei);

	is_int(err, want, "%s", what);
	if (err && err != want)
		diag("%s", ei.msg);
	if (msg)
		snprintf(msg, msglen, "%s", ei.msg);
	return ni;
}

static char *export(const tg_nodeinfo *ni, tg_nodeinfo_format fmt,
		    const char *node)
{
	tg_errinfo ei = { "" };
	char *out = NULL;

	if (tg_nodeinfo_export(ni, fmt, node, &out, &ei))
		diag("export: %s", ei.msg);
	return out;
}

static void test_nvidia_smi(void)
{
	size_t len = 0;
	char *buf = td_read("discover", SMI_HGX, &len), *out;
	tg_nodeinfo *ni = NULL;
	tg_errinfo ei = { "" };
	tg_gpuinfo g;
	tg_nicinfo n;
	unsigned i, j, all18 = 1;

	is_int(tg_nodeinfo_parse_nvidia_smi(buf, len, "hgx.txt", &ni, &ei),
	       TG_OK, "HGX H100: parses");
	if (!ni) {
		diag("%s", ei.msg);
		free(buf);
		return;
	}
	is_str(tg_nodeinfo_source(ni), "nvidia-smi", "HGX: source");
	is_int(tg_nodeinfo_ngpus(ni), 8, "HGX: 8 GPUs");
	is_int(tg_nodeinfo_nnics(ni), 10, "HGX: 10 NIC columns");
	ok(tg_nodeinfo_nvlink_known(ni), "HGX: NVLink known");
	is_int(tg_nodeinfo_nislands(ni), 1, "HGX: one NVLink island");
	for (i = 0; i < 8; i++)
		for (j = 0; j < 8; j++)
			if (i != j && tg_nodeinfo_links(ni, i, j) != 18)
				all18 = 0;
	ok(all18, "HGX: every pair is NV18");
	is_int(tg_nodeinfo_links(ni, 3, 3), 0, "HGX: no links to itself");
	is_int(tg_nodeinfo_gpu(ni, 3, &g), TG_OK, "HGX: GPU3");
	is_int(g.numa, 0, "HGX: GPU3 on NUMA 0");
	is_str(g.cpus, "0-55,112-167", "HGX: GPU3's CPUs");
	is_int(g.nic, 5, "HGX: GPU3's PIX NIC is NIC5");
	is_int(g.nic_path, TG_PATH_PIX, "HGX: through at most one bridge");
	is_str(g.name, "GPU3", "HGX: name");
	is_int(tg_nodeinfo_gpu(ni, 4, &g), TG_OK, "HGX: GPU4");
	is_int(g.numa, 1, "HGX: GPU4 on NUMA 1");
	is_int(tg_nodeinfo_gpu(ni, 8, &g), TG_ENOENT, "HGX: no GPU8");
	is_int(tg_nodeinfo_nic(ni, 9, &n), TG_OK, "HGX: NIC9");
	is_str(n.name, "NIC9", "HGX: NIC named after its column");
	out = export(ni, TG_NODEINFO_GRES, "hgx-01");
	td_golden(out, "discover", "nvidia_smi_hgx.gres.conf", "HGX gres");
	like(out, "NodeName=hgx-01 Name=gpu File=/dev/nvidia0 "
	     "Links=-1,18,18,18,18,18,18,18\n", "HGX gres: Links=");
	tg_free(out);
	out = export(ni, TG_NODEINFO_LABELS, "hgx-01");
	like(out, "kubectl label node hgx-01 --overwrite "
	     "topogang.io/gpu-count=8 topogang.io/nvlink-islands=0-7 "
	     "topogang.io/nvlink-island-size=8\n", "HGX labels");
	like(out, "kubectl annotate node hgx-01 --overwrite "
	     "'topogang.io/gpu-topology={\"gpus\":[", "HGX annotation");
	tg_free(out);
	out = export(ni, TG_NODEINFO_PATCH, "hgx-01");
	like(out, "{\"metadata\": {\"labels\": {\"topogang.io/gpu-count\": "
	     "\"8\", \"topogang.io/nvlink-islands\": \"0-7\", "
	     "\"topogang.io/nvlink-island-size\": \"8\"}, \"annotations\": "
	     "{\"topogang.io/gpu-topology\": \"{\\\"gpus\\\":[", "HGX: merge "
	     "patch of the Node");
	{
		cJSON *js = out ? cJSON_Parse(out) : NULL;

		ok(js != NULL, "HGX merge patch parses");
		cJSON_Delete(js);
	}
	tg_free(out);
	out = export(ni, TG_NODEINFO_JSON, "hgx-01");
	{
		cJSON *js = out ? cJSON_Parse(out) : NULL;

		ok(js != NULL, "HGX JSON parses");
		is_int(cJSON_GetArraySize(cJSON_GetObjectItem(js, "gpus")), 8,
		       "HGX JSON: 8 GPUs");
		is_str(cJSON_GetStringValue(cJSON_GetObjectItem(js,
								"islands")),
		       "0-7", "HGX JSON: islands");
		cJSON_Delete(js);
	}
	tg_free(out);
	{
		tg_topology *t = tg_topology_create();
		tg_node_id id;

		tg_topology_add_node(t, "hgx-01", NULL, &id);
		is_int(tg_nodeinfo_apply(ni, t, id), TG_OK, "apply to a node");
		is_int(tg_topology_node_ngpus(t, id), 8, "the node has 8 "
		       "GPUs");
		tg_topology_destroy(t);
	}
	is_int(tg_nodeinfo_export(ni, TG_NODEINFO_GRES, "a b", &out, &ei),
	       TG_EINVAL, "a node name with a blank");
	tg_nodeinfo_destroy(ni);
	free(buf);
}

/* Hand-made variants: escapes, legend, PCIe-only, two islands. */
static void test_nvidia_smi_variants(void)
{
	static const char esc[] =
		"\t\033[4mGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity"
		"\033[0m\n"
		"GPU0\t X \tNV4\tPXB\t0-7\t0\n"
		"GPU1\tNV4\t X \tSYS\t8-15\t1\n"
		"NIC0\tPXB\tSYS\t X\n\n"
		"Legend:\n\n  X    = Self\n  NV#  = NVLinks\n\n"
		"NIC Legend:\n\n  NIC0: mlx5_0\n";
	static const char pcie[] =
		"        GPU0    GPU1    GPU2    CPU Affinity    NUMA Affinity\n"
		"GPU0     X      PHB     SYS     0-15            0\n"
		"GPU1    PHB      X      SYS     0-15            0\n"
		"GPU2    SYS     SYS      X      16-31           1\n";
	static const char two[] =
		"\tGPU0\tGPU1\tGPU2\tGPU3\n"
		"GPU0\t X \tNV2\tSYS\tSYS\n"
		"GPU1\tNV2\t X \tSYS\tSYS\n"
		"GPU2\tSYS\tSYS\t X \tNV2\n"
		"GPU3\tSYS\tSYS\tNV2\t X \n";
	/* malformed tables: TG_EPARSE and, where given, this message */
	static const struct {
		const char *text, *what, *msg;
	} bad[] = {
		{ "GPU0 X\n", "no header",
		  "topo.txt:1: a GPU row before the header line" },
		{ "hello\n", "not nvidia-smi",
		  "topo.txt:1: no header line starting with GPU0" },
		{ "\tGPU0\tGPU1\nGPU0\t X \tNV4\n", "a missing row",
		  "topo.txt: no row for GPU1 (the output is cut short?)" },
		{ "\tGPU0\tGPU1\nGPU0\t X \tNV4\nGPU1\tNV4\n", "a cut row",
		  "topo.txt:3: row GPU1 has 1 cells; the header has 2" },
		{ "\tGPU0\tGPU1\nGPU0\t X \tNV4\nGPU1\tNV2\t X\n",
		  "asymmetric links",
		  "GPU1-GPU0 has 2 NVLinks one way and 4 the other" },
		{ "\tGPU0\tGPU1\nGPU0\t X \tQQ\nGPU1\tNV2\t X\n", "a bad cell",
		  "topo.txt:2: row GPU0, column 2: 'QQ' is not X, NV#" },
		{ "\tGPU0\tGPU1\nGPU0\tNV1\t X\nGPU1\t X\tNV1\n",
		  "X off the diagonal", NULL },
		{ "\tGPU1\tGPU0\n", "columns out of order", NULL },
	};
	char msg[512], *out;
	tg_nodeinfo *ni;
	tg_gpuinfo g;
	tg_nicinfo n;
	size_t c;

	ni = smi(esc, TG_OK, "ANSI escapes and the NIC legend", NULL, 0);
	if (ni) {
		is_int(tg_nodeinfo_links(ni, 0, 1), 4, "escapes: NV4");
		tg_nodeinfo_nic(ni, 0, &n);
		is_str(n.name, "mlx5_0", "the legend names NIC0");
		tg_nodeinfo_gpu(ni, 0, &g);
		is_int(g.nic_path, TG_PATH_PXB, "GPU0 - NIC0: PXB");
		tg_nodeinfo_gpu(ni, 1, &g);
		is_int(g.nic_path, TG_PATH_SYS, "GPU1 - NIC0: SYS");
		is_str(g.cpus, "8-15", "GPU1's CPUs");
		tg_nodeinfo_destroy(ni);
	}
	ni = smi(pcie, TG_OK, "PCIe only, blanks instead of tabs", NULL, 0);
	if (ni) {
		is_int(tg_nodeinfo_nislands(ni), 3, "PCIe only: every GPU is "
		       "its own island");
		out = export(ni, TG_NODEINFO_LABELS, "pc1");
		like(out, "topogang.io/nvlink-islands=0.1.2 "
		     "topogang.io/nvlink-island-size=1", "PCIe only: labels");
		tg_free(out);
		tg_nodeinfo_destroy(ni);
	}
	ni = smi(two, TG_OK, "two NVLink pairs", NULL, 0);
	if (ni) {
		const uint8_t *isl = tg_nodeinfo_islands(ni);

		is_int(tg_nodeinfo_nislands(ni), 2, "two islands");
		ok(isl[0] == 0 && isl[1] == 0 && isl[2] == 1 && isl[3] == 1,
		   "islands 0,0,1,1");
		out = export(ni, TG_NODEINFO_GRES, "n1");
		like(out, "NVLink islands 0-1.2-3\n", "gres: islands comment");
		like(out, "File=/dev/nvidia2 Links=0,0,-1,2\n",
		     "gres: GPU2's links");
		tg_free(out);
		tg_nodeinfo_destroy(ni);
	}

	for (c = 0; c < sizeof(bad) / sizeof(bad[0]); c++) {
		smi(bad[c].text, TG_EPARSE, bad[c].what, msg, sizeof(msg));
		if (bad[c].msg)
			like(msg, bad[c].msg, "%s: message", bad[c].what);
	}
	{
		char big[8192];
		size_t k = 0;
		unsigned i;

		for (i = 0; i < 65; i++)
			k += (size_t)snprintf(big + k, sizeof(big) - k,
					      "\tGPU%u", i);
		snprintf(big + k, sizeof(big) - k, "\n");
		smi(big, TG_ELIMIT, "65 GPUs", msg, sizeof(msg));
		like(msg, "more than 64 GPUs", "65 GPUs: message");
	}
	{
		tg_nodeinfo *x = NULL;
		tg_errinfo ei = { "" };

		is_int(tg_nodeinfo_parse_nvidia_smi("\tGPU0\nGPU0\t X\0\n",
						    15, "nul", &x, &ei),
		       TG_EPARSE, "NUL byte");
		is_int(tg_nodeinfo_parse_nvidia_smi(NULL, 3, "x", &x, &ei),
		       TG_EINVAL, "NULL buffer");
	}
}

/* Loads tests/data/discover/<name> through hwloc. */
static tg_err load_xml(const char *name, tg_nodeinfo **ni, tg_errinfo *ei)
{
	return tg_nodeinfo_load_hwloc_file(td_path("discover", name), ni, ei);
}

/*
 * hwloc without NVLink, then nvidia-smi's links merged in: \p ni is the
 * loaded synthetic file, \p s2 and \p s3 nvidia-smi with 2 and 1 GPUs.
 */
static void test_hwloc_merge(tg_nodeinfo *ni, const tg_nodeinfo *s2,
			     const tg_nodeinfo *s3)
{
	tg_errinfo ei = { "" };
	tg_gpuinfo g;
	char *out;

	ok(!tg_nodeinfo_nvlink_known(ni), "NVLink unknown");
	out = export(ni, TG_NODEINFO_GRES, "nd");
	like(out, "NVLink unknown (no Links=)", "gres says so");
	tg_free(out);
	is_int(tg_nodeinfo_merge_nvlink(ni, s3, &ei), TG_EINVAL,
	       "merge: GPU counts differ");
	like(ei.msg, "nvidia-smi sees 1 GPU, hwloc-xml 2", "merge: message");
	is_int(tg_nodeinfo_merge_nvlink(ni, s2, &ei), TG_OK,
	       "merge nvidia-smi's NVLink");
	is_int(tg_nodeinfo_links(ni, 0, 1), 6, "merged: NV6");
	is_int(tg_nodeinfo_nislands(ni), 1, "merged: one island");
	memset(&g, 0, sizeof(g));
	is_int(tg_nodeinfo_gpu(ni, 0, &g), TG_OK, "merged: GPU0");
	is_str(g.pci, "0000:03:00.0", "merged: hwloc's PCI address stays");
}

/*
 * hwloc has two XML readers: libxml2's (in the libhwloc-plugins package,
 * a Recommends that a minimal install lacks) and a built-in one that only
 * reads what hwloc itself writes (no comments, for one).  A child process
 * loads every test file with HWLOC_LIBXML=0 (hwloc reads the variable
 * once per process, so this needs a process of its own): the tests must
 * pass on either kind of machine.  Returns how many files failed to load
 * (-1: the child did not run).
 */
static int nolibxml_failures(void)
{
	static const char *const files[] = { XML_POWER8, XML_DGX2H,
					     XML_SYNTH, XML_H200 };
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int bad = 0;
		size_t i;

		setenv("HWLOC_LIBXML", "0", 1);
		for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
			tg_nodeinfo *ni = NULL;
			tg_errinfo ei = { "" };

			if (load_xml(files[i], &ni, &ei) != TG_OK) {
				printf("# HWLOC_LIBXML=0: %s\n", ei.msg);
				bad++;
			}
			tg_nodeinfo_destroy(ni);
		}
		fflush(stdout);
		_exit(bad);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static void test_hwloc(void)
{
	tg_nodeinfo *ni = NULL;
	tg_errinfo ei = { "" };
	tg_gpuinfo g;
	tg_nicinfo n;
	char *out;
	size_t len = 0;
	char *buf;

	if (!tg_nodeinfo_have_hwloc()) {
		is_int(load_xml(XML_POWER8, &ni, &ei), TG_ENOENT,
		       "without hwloc: ENOENT");
		like(ei.msg, "built without hwloc", "without hwloc: message");
		skip(55, "built without hwloc");
		return;
	}
	is_int(nolibxml_failures(), 0, "every test file loads with hwloc's "
	       "built-in XML parser (HWLOC_LIBXML=0)");
	/* POWER8: NVLink bandwidth matrix, 2 links per pair */
	is_int(load_xml(XML_POWER8, &ni, &ei), TG_OK,
	       "POWER8: loads (an hwloc 3 export)");
	if (ni) {
		const uint8_t *isl = tg_nodeinfo_islands(ni);

		is_str(tg_nodeinfo_source(ni), "hwloc-xml", "POWER8: source");
		is_int(tg_nodeinfo_ngpus(ni), 4, "POWER8: 4 P100");
		ok(tg_nodeinfo_nvlink_known(ni), "POWER8: NVLink known");
		is_int(tg_nodeinfo_links(ni, 0, 1), 2, "POWER8: GPU0-GPU1 "
		       "has 2 NVLinks (40000 MB/s of 20000)");
		is_int(tg_nodeinfo_links(ni, 0, 2), 0, "POWER8: GPU0-GPU2 "
		       "none (the CPU links do not count)");
		is_int(tg_nodeinfo_nislands(ni), 2, "POWER8: two islands");
		ok(isl[0] == isl[1] && isl[2] == isl[3] && isl[0] != isl[2],
		   "POWER8: {0,1} and {2,3}");
		tg_nodeinfo_gpu(ni, 2, &g);
		is_int(g.numa, 1, "POWER8: GPU2 on NUMA 1");
		is_str(g.model, "Tesla P100-SXM2-16GB", "POWER8: model");
		is_str(g.pci, "000a:01:00.0", "POWER8: PCI bus id");
		is_str(g.cores, "4-7", "POWER8: GPU2's cores");
		out = export(ni, TG_NODEINFO_GRES, "minsky");
		td_golden(out, "discover", "power8.gres.conf", "POWER8 gres");
		like(out, "NodeName=minsky Name=gpu Type=p100-sxm2-16gb "
		     "File=/dev/nvidia0 Cores=0-3 Links=-1,2,0,0\n",
		     "POWER8 gres: Type, Cores and Links");
		tg_free(out);
		tg_nodeinfo_destroy(ni);
		ni = NULL;
	}
	/* DGX-2H: 16 V100, 12 NVSwitches, two baseboards */
	is_int(load_xml(XML_DGX2H, &ni, &ei), TG_OK, "DGX-2H: loads");
	if (ni) {
		is_int(tg_nodeinfo_ngpus(ni), 16, "DGX-2H: 16 GPUs, the "
		       "NVSwitches are not GPUs");
		is_int(tg_nodeinfo_links(ni, 0, 7), 6, "DGX-2H: GPU0-GPU7 "
		       "through 6 NVSwitches");
		is_int(tg_nodeinfo_links(ni, 0, 8), 0, "DGX-2H: no trunk in "
		       "the matrix between the baseboards");
		is_int(tg_nodeinfo_nislands(ni), 2, "DGX-2H: two islands of "
		       "eight");
		tg_nodeinfo_gpu(ni, 15, &g);
		is_int(g.island, 1, "DGX-2H: GPU15 in the second island");
		is_int(g.numa, 1, "DGX-2H: GPU15 on NUMA 1");
		out = export(ni, TG_NODEINFO_GRES, "dgx2");
		td_golden(out, "discover", "dgx2h.gres.conf", "DGX-2H gres");
		tg_free(out);
		out = export(ni, TG_NODEINFO_LABELS, "dgx2");
		like(out, "topogang.io/gpu-count=16 "
		     "topogang.io/nvlink-islands=0-7.8-15 "
		     "topogang.io/nvlink-island-size=8\n", "DGX-2H labels");
		tg_free(out);
		tg_nodeinfo_destroy(ni);
		ni = NULL;
	}
	/* hand-written hwloc 2 file: a NIC next to GPU0 */
	is_int(load_xml(XML_SYNTH, &ni, &ei), TG_OK,
	       "synthetic: loads (an hwloc 2 export)");
	if (ni) {
		is_int(tg_nodeinfo_ngpus(ni), 2, "synthetic: 2 GPUs");
		is_int(tg_nodeinfo_nnics(ni), 1, "synthetic: 1 NIC");
		tg_nodeinfo_nic(ni, 0, &n);
		is_str(n.name, "mlx5_0", "synthetic: the NIC's OpenFabrics "
		       "name");
		tg_nodeinfo_gpu(ni, 0, &g);
		is_int(g.nic, 0, "synthetic: GPU0's NIC");
		is_int(g.nic_path, TG_PATH_PIX, "synthetic: GPU0 and the NIC "
		       "share a PCIe switch (PIX)");
		tg_nodeinfo_gpu(ni, 1, &g);
		is_int(g.nic_path, TG_PATH_PHB, "synthetic: GPU1 reaches it "
		       "through the host bridge (PHB)");
		is_int(tg_nodeinfo_links(ni, 0, 1), 4, "synthetic: 4 NVLinks "
		       "(100000 MB/s)");
		is_str(g.model, "NVIDIA H100 80GB HBM3", "synthetic: model");
		out = export(ni, TG_NODEINFO_GRES, "syn");
		like(out, "Type=h100_80gb_hbm3 File=/dev/nvidia1 Cores=0-1 "
		     "Links=4,-1\n", "synthetic gres");
		tg_free(out);
		tg_nodeinfo_destroy(ni);
		ni = NULL;
	}
	/* hwloc without NVLink (no NVML backend) + nvidia-smi's links */
	buf = td_read("discover", XML_SYNTH, &len);
	if (buf) {
		char *d = strstr(buf, "  <distances2hetero");
		tg_nodeinfo *s2 = smi("\tGPU0\tGPU1\nGPU0\t X \tNV6\n"
				      "GPU1\tNV6\t X \n", TG_OK,
				      "two GPUs, NV6", NULL, 0);
		tg_nodeinfo *s3 = smi("\tGPU0\nGPU0\t X\n", TG_OK,
				      "one GPU", NULL, 0);

		if (d)
			memcpy(d, "</topology>\n", 13);
		is_int(tg_nodeinfo_load_hwloc_xml(buf, strlen(buf), "nd.xml",
						  &ni, &ei), TG_OK,
		       "hwloc XML without an NVLink matrix");
		if (ni)
			test_hwloc_merge(ni, s2, s3);
		else
			skip(8, "the XML did not load");
		tg_nodeinfo_destroy(ni);
		tg_nodeinfo_destroy(s2);
		tg_nodeinfo_destroy(s3);
		ni = NULL;
		free(buf);
	}
	/* broken XML: one clear error, never a crash */
	buf = td_read("discover", XML_POWER8, &len);
	if (buf) {
		size_t cut;
		unsigned rejected = 0, tries = 0;

		for (cut = 0; cut < len; cut += 1777) {
			tries++;
			ei.msg[0] = '\0';
			if (tg_nodeinfo_load_hwloc_xml(buf, cut, "cut.xml", &ni,
						       &ei) != TG_OK &&
			    strncmp(ei.msg, "cut.xml: ", 9) == 0)
				rejected++;
			tg_nodeinfo_destroy(ni);
			ni = NULL;
		}
		is_int(rejected, tries, "truncated XML: every cut is one "
		       "error naming the file");
		/* hwloc's built-in reader accepts a file cut before its
		 * last closing tags */
		is_int(tg_nodeinfo_load_hwloc_xml(buf, (size_t)(strstr(buf,
				"</topology>") - buf), "end.xml", &ni, &ei),
		       TG_EPARSE, "XML cut just before </topology>");
		like(ei.msg, "end.xml: hwloc XML cut short: it does not end "
		     "with </topology>", "cut before </topology>: message");
		memcpy(strstr(buf, "version=\"3.0\""), "version=\"9.0\"", 13);
		is_int(tg_nodeinfo_load_hwloc_xml(buf, len, "v9.xml", &ni,
						  &ei), TG_EPARSE,
		       "an hwloc XML version from the future");
		like(ei.msg, "v9.xml: hwloc XML version 9.0", "v9: message");
		free(buf);
	}
	is_int(tg_nodeinfo_load_hwloc_xml("<topology", 9, "junk.xml", &ni,
					  &ei), TG_EPARSE, "junk XML");
	like(ei.msg, "junk.xml: hwloc", "junk: message");
	is_int(tg_nodeinfo_load_hwloc_xml("", 0, "empty.xml", &ni, &ei),
	       TG_EPARSE, "empty XML");
	/* this host */
	is_int(tg_nodeinfo_discover(&ni, &ei), TG_OK, "this host loads");
	ok(ni && tg_nodeinfo_ngpus(ni) <= TG_MAX_GPUS, "this host: %u GPUs",
	   tg_nodeinfo_ngpus(ni));
	out = ni ? export(ni, TG_NODEINFO_JSON, NULL) : NULL;
	ok(out && strstr(out, "\"source\": \"hwloc\""), "this host: JSON");
	tg_free(out);
	tg_nodeinfo_destroy(ni);
}


/*
 * One H200 in a VM, both files captured on the machine itself: the
 * driver (580) underlines nvidia-smi's header with ANSI escapes even when
 * the output is a file, and Debian's hwloc has no NVML backend, so the
 * XML knows the GPU only as an NVIDIA 3D controller on the PCI bus.  The
 * live path (`topogang discover node`) merges the two; so does this test.
 */
static void test_real_h200(void)
{
	tg_nodeinfo *s = NULL, *x = NULL;
	tg_errinfo ei = { "" };
	size_t len = 0;
	char *buf = td_read("discover", SMI_H200, &len), *out;
	tg_gpuinfo g;
	tg_nicinfo n;

	if (!buf) {
		ok(0, "H200: read %s", SMI_H200);
		return;
	}
	is_int(tg_nodeinfo_parse_nvidia_smi(buf, len, SMI_H200, &s, &ei),
	       TG_OK, "H200 nvidia-smi: parses despite the ANSI escapes");
	free(buf);
	if (!s) {
		diag("%s", ei.msg);
		return;
	}
	is_int(tg_nodeinfo_ngpus(s), 1, "H200 nvidia-smi: one GPU");
	memset(&g, 0, sizeof(g));
	tg_nodeinfo_gpu(s, 0, &g);
	is_str(g.cpus, "0-15", "H200 nvidia-smi: CPU affinity 0-15");
	is_int(g.numa, 0, "H200 nvidia-smi: NUMA 0");
	ok(tg_nodeinfo_nvlink_known(s), "H200 nvidia-smi: NVLink known "
	   "(a lone GPU: an island of one)");
	is_int(tg_nodeinfo_nislands(s), 1, "H200 nvidia-smi: one island");
	if (!tg_nodeinfo_have_hwloc()) {
		skip(9, "built without hwloc");
		tg_nodeinfo_destroy(s);
		return;
	}
	is_int(load_xml(XML_H200, &x, &ei), TG_OK, "H200 hwloc: loads");
	if (!x) {
		diag("%s", ei.msg);
		skip(8, "the H200 XML did not load");
		tg_nodeinfo_destroy(s);
		return;
	}
	is_int(tg_nodeinfo_ngpus(x), 1, "H200 hwloc: one GPU, found by "
	       "its PCI vendor and class (no NVML)");
	memset(&g, 0, sizeof(g));
	tg_nodeinfo_gpu(x, 0, &g);
	is_str(g.pci, "0000:00:06.0", "H200 hwloc: PCI 00:06.0, as "
	       "nvidia-smi --query-gpu=pci.bus_id says");
	is_str(g.cores, "0-15", "H200 hwloc: cores 0-15");
	memset(&n, 0, sizeof(n));
	ok(tg_nodeinfo_nnics(x) == 1 && tg_nodeinfo_nic(x, 0, &n) == TG_OK &&
	   n.name && strcmp(n.name, "eth0") == 0, "H200 hwloc: one NIC, "
	   "eth0 (the virtio disks are not NICs)");
	is_int(g.nic_path, TG_PATH_PHB, "H200 hwloc: GPU to eth0 through "
	       "the host bridge (PHB)");
	ok(!tg_nodeinfo_nvlink_known(x), "H200 hwloc: NVLink unknown "
	   "without NVML");
	is_int(tg_nodeinfo_merge_nvlink(x, s, &ei), TG_OK,
	       "H200: nvidia-smi's NVLink merges into hwloc's view");
	out = export(x, TG_NODEINFO_GRES, "h200-node");
	is_str(out, "# gres.conf for h200-node written by topogang "
	       "(hwloc-xml): 1 GPU, NVLink islands 0\n"
	       "NodeName=h200-node Name=gpu File=/dev/nvidia0 Cores=0-15 "
	       "Links=-1\n", "H200: the gres.conf line the live "
	       "`discover node` printed on that machine");
	tg_free(out);
	tg_nodeinfo_destroy(x);
	tg_nodeinfo_destroy(s);
}

/* ---- allocation failures: every call from the Nth on fails ---- */

/* The inputs of oom_scenario(). */
typedef struct oom_inputs {
	const char *smi_text, *xml;	/* xml NULL: without hwloc */
	size_t xmllen;
} oom_inputs;

static tg_err oom_scenario(void *ctx)
{
	const oom_inputs *in = ctx;
	const char *smi_text = in->smi_text, *xml = in->xml;
	size_t xmllen = in->xmllen;
	static const tg_nodeinfo_format fmts[] = {
		TG_NODEINFO_JSON, TG_NODEINFO_LABELS, TG_NODEINFO_GRES,
		TG_NODEINFO_PATCH
	};
	tg_nodeinfo *ni = NULL;
	tg_errinfo ei = { "" };
	char *out = NULL;
	size_t i;
	tg_err err;

	err = tg_nodeinfo_parse_nvidia_smi(smi_text, strlen(smi_text), "s",
					   &ni, &ei);
	for (i = 0; !err && i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		err = tg_nodeinfo_export(ni, fmts[i], "n1", &out, &ei);
		tg_free(out);
		out = NULL;
	}
	tg_nodeinfo_destroy(ni);
	ni = NULL;
	if (!err && xml)
		err = tg_nodeinfo_load_hwloc_xml(xml, xmllen, "x", &ni, &ei);
	for (i = 0; !err && ni && i < 3; i++) {
		err = tg_nodeinfo_export(ni, fmts[i], "n1", &out, &ei);
		tg_free(out);
		out = NULL;
	}
	tg_nodeinfo_destroy(ni);
	return err;
}

static void test_oom(void)
{
	oom_inputs in = { NULL, NULL, 0 };
	size_t slen = 0;

	in.smi_text = td_read("discover", SMI_HGX, &slen);
	if (tg_nodeinfo_have_hwloc())
		in.xml = td_read("discover", XML_POWER8, &in.xmllen);
	if (!in.smi_text) {
		ok(0, "out of memory: read the inputs");
		return;
	}
	oom_sweep(oom_scenario, &in, "out of memory");
	free((char *)in.smi_text);
	free((char *)in.xml);
}

int main(void)
{
	test_nvidia_smi();
	test_nvidia_smi_variants();
	test_hwloc();
	test_real_h200();
	test_oom();
	tg_nodeinfo_destroy(NULL);
	return done_testing();
}
