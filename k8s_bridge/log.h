/*
 * k8s_bridge/log.h - structured logs: one line per event, logfmt
 * ("ts=... level=info msg=decision gang=default/job status=placed ...").
 *
 * Values are quoted when they hold spaces, quotes, '=' or control
 * characters, so every line splits back into its keys.  Lines go to
 * stderr (the container log) and are written with one write() each.
 */
#ifndef BR_LOG_H
#define BR_LOG_H

enum { BR_LOG_DEBUG = 0, BR_LOG_INFO, BR_LOG_WARN, BR_LOG_ERROR };

/* Lines below \p level are dropped.  Default: info. */
void br_log_set_level(int level);
int br_log_level(void);
/* "debug", "info", "warn", "error"; -1 for anything else. */
int br_log_parse_level(const char *s);

/*
 * Logs \p msg with key/value string pairs, terminated by NULL:
 *   br_log(BR_LOG_INFO, "bound", "pod", "default/p", "node", "n1", NULL);
 * A NULL value prints as an empty string.
 */
void br_log(int level, const char *msg, ...);

#endif /* BR_LOG_H */
