/*
 * k8s_bridge/bconfig.h - the bridge's configuration: how to reach the API
 * server, and what the scheduler does.
 *
 * Connection, first match wins:
 *   --server URL [--token-file F] [--ca-file F] [--insecure]
 *   --kubeconfig FILE [--context NAME]   (clusters/users/contexts)
 *   in-cluster: KUBERNETES_SERVICE_HOST/PORT + the service account's
 *   token, ca.crt and namespace
 *   $KUBECONFIG
 * Scheduling: --config FILE (YAML, see config/bridge.yaml for every key);
 * command-line flags override the file.  Unknown keys are errors.
 *
 * (Named bconfig, not config: config.h is autoconf's.)
 */
#ifndef BR_BCONFIG_H
#define BR_BCONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BR_MAX_LEVELS		16
#define BR_MAX_BANDWIDTHS	16
#define BR_SA_DIR	"/var/run/secrets/kubernetes.io/serviceaccount"
/* Defaults: the API client's rate limit (kube-scheduler's clientConnection
 * qps and burst), and how long a watch may deliver nothing (a real API
 * server sends a bookmark about once a minute) before it is taken as a
 * half-open connection and started again. */
#define BR_QPS			50
#define BR_BURST		100
#define BR_WATCH_IDLE_S		90
/* Default binding.volumeBindTimeoutSeconds: how long a placed gang waits
 * for its WaitForFirstConsumer claims to be bound before it is reported
 * and waits again (volbind.c); kube-scheduler's VolumeBinding
 * bindTimeoutSeconds default. */
#define BR_VOLUME_BIND_TIMEOUT_S	600

typedef struct br_layer_bw {
	char *layer;		/* layer name or node label key */
	double gbps;
} br_layer_bw;

typedef struct br_config {
	/* connection */
	char *server;		/* "https://host:port", no trailing '/' */
	char *token_file;	/* re-read every minute and on a 401 */
	char *token;		/* a static token (kubeconfig "token") */
	char *ca_file;
	char *ca_data;		/* PEM (certificate-authority-data) */
	size_t ca_data_len;
	bool insecure;
	char *cert_file, *key_file;
	char *cert_data, *key_data;	/* PEM (client-*-data) */
	size_t cert_data_len, key_data_len;
	char *conn_source;	/* how the server was found, for the log */
	char *kubeconfig;	/* --kubeconfig */
	char *context;		/* --context */
	char *config_file;	/* --config */

	/* scheduling */
	char *scheduler_name;
	char *levels[BR_MAX_LEVELS];	/* farthest first; 0 = from CRs */
	unsigned nlevels;
	br_layer_bw bw[BR_MAX_BANDWIDTHS];
	unsigned nbw;
	double node_bw;			/* 0 = the core's default */
	bool preempt_delete;		/* DELETE victims, not Eviction */
	int64_t eviction_grace_s;	/* -1 (default) = the pod's own */
	int64_t nomination_timeout_s;
	int64_t repair_grace_s;
	int64_t volume_bind_timeout_s;	/* volbind.c */
	int64_t backoff_initial_ms, backoff_max_ms;
	int64_t unschedulable_flush_s;

	/* informers */
	unsigned page_size;
	int64_t watch_timeout_s;	/* jittered: x 1..2 (client-go) */
	int64_t watch_idle_s;		/* nothing for so long: cut, 0 = never */
	int64_t reprobe_s;

	/* the API client (kube-scheduler's clientConnection) */
	double qps;			/* requests a second, 0 = no limit */
	double burst;

	/* leader election */
	bool leader_elect;
	char *lease_name;
	char *lease_namespace;
	double lease_duration_s, renew_deadline_s, retry_period_s;
	char *identity;

	/* mixed mode (Slurm arbitrates the shared nodes; mixed.h), NULL =
	 * off; slurm_user is set only on the slurmrestd client's copy */
	struct br_mixed_conf *mixed;
	char *slurm_user;

	/* HTTP endpoint, logs */
	char *listen;			/* "HOST:PORT"; "" = none */
	bool ui;			/* /ui and /ui/state (ui.h) */
	int log_level;
} br_config;

/* Defaults (scheduler "topogang", 15 s / 10 s / 2 s lease, ...). */
void br_config_init(br_config *c);
void br_config_free(br_config *c);

/*
 * Reads the command line (and the --config file it names), then finds
 * the API server.  Returns 0 to run, 1 when --help or --version was
 * printed (exit 0), -1 with \p err filled (exit 2).
 */
int br_config_from_args(br_config *c, int argc, char **argv, char *err,
			size_t errlen);

/* The pieces, for tests.  0 or -1 with \p err filled. */
int br_config_load_file(br_config *c, const char *path, char *err,
			size_t errlen);
int br_config_load_text(br_config *c, const char *text, size_t len,
			const char *source, char *err, size_t errlen);
int br_config_load_kubeconfig(br_config *c, const char *path,
			      const char *context, char *err, size_t errlen);
/*
 * The first YAML document of a config file or kubeconfig as a cJSON tree,
 * read by libtopogang's document reader (topogang/doc.h: YAML 1.2 core
 * schema, duplicate keys refused, messages "FILE:LINE: ..."); an empty
 * text gives an empty object.
 * \note The caller frees it with cJSON_Delete(); NULL with \p err filled.
 */
struct cJSON *br_config_yaml(const char *text, size_t len,
			     const char *source, char *err, size_t errlen);
/*
 * In-cluster: 1 when KUBERNETES_SERVICE_HOST/PORT are unset (not in a
 * cluster), 0 when configured, -1 on error.  \p sa_dir is normally
 * BR_SA_DIR.
 */
int br_config_in_cluster(br_config *c, const char *sa_dir, char *err,
			 size_t errlen);

/* Base64 (standard alphabet, padding optional); caller frees. */
char *br_base64_decode(const char *s, size_t *len);

#endif /* BR_BCONFIG_H */
