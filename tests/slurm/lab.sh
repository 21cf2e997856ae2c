# tests/slurm/lab.sh - a real Slurm cluster on loopback, for the
# select/topogang (22.05) and topology/topogang (24.11) tests (sourced,
# POSIX sh).  LAB_SLURM=2411 (before lab_init) runs Slurm 24.11 from
# $TOPOGANG_SLURM2411 (default /opt/topogang/slurm-24.11, built by
# scripts/bootstrap) with SelectType=select/cons_tres and
# TopologyPlugin=topology/topogang; the default is Debian's 22.05 with
# select/topogang.  The recipe is the measured
# one of shared/research/slurm-lab.md: slurmctld and 12 slurmd
# (multiple-slurmd, one port each) on 127.0.0.1, auth/none, fake GPUs
# (symlinks to /dev/null), everything under one temporary lab directory,
# started by the test and stopped by PID.
#
#   lab_init NAME BASEPORT     prerequisites (or "1..0 # SKIP why", exit)
#   lab_write [tree|none]      slurm.conf, topology.conf, gres.conf, ...
#                              (24.11: [topogang|tree|block|default],
#                              the TopologyPlugin; default topogang)
#                              (LAB_AUTH=munge: auth/munge with a private
#                              munged; default auth/none; LAB_NODES=N and
#                              LAB_TOPOLOGY=FILE: N nodes node-[0..N-1]
#                              under that topology.conf instead of the
#                              seed's 12; LAB_ACCT=dbd:
#                              accounting in a private slurmdbd over a
#                              private MariaDB, for QOS)
#   lab_start                  slurmctld -c + 12 slurmd, wait for IDLE
#   lab_stop                   cancel the jobs, kill the daemons by PID
#   LAB_RESTD=1 before lab_write: auth/jwt as AuthAltTypes (a key in the
#   lab), and lab_restd_start / lab_restd_stop run the real slurmrestd
#   (as nobody, rest_auth/jwt, openapi/v0.0.38) on 127.0.0.1:$lab_restd_port
#   with a root token in $LAB/etc/jwt.token (slurm-lab.md section 8)
#   LAB_LOW_GRACE=SECONDS: GraceTime of partition low (preemption sends
#   SIGTERM and waits that long)
#   LAB_NO_CONS_TRES=1 before lab_write: select_cons_tres.so left out of
#   the lab's PluginDir (select/topogang answers cons_tres's plugin_id)
#
# TAP: ok DESC / nok DESC / is GOT WANT DESC / tap_done.

LAB_NODES=${LAB_NODES:-12}
tap_n=0
tap_fail=0

ok() { tap_n=$((tap_n + 1)); echo "ok $tap_n - $*"; }
nok() { tap_n=$((tap_n + 1)); echo "not ok $tap_n - $*"; tap_fail=1; }
diag() { echo "$*" | sed 's/^/# /'; }
# is GOT WANT DESC: equal strings, both shown on failure
is() {
	if [ "$1" = "$2" ]; then ok "$3"
	else nok "$3"; diag "  got:      '$1'"; diag "  expected: '$2'"; fi
}
# like GOT PATTERN DESC: grep -E PATTERN matches GOT
like() {
	if printf '%s\n' "$1" | grep -Eq -e "$2"; then ok "$3"
	else nok "$3"; diag "  got:      '$1'"; diag "  expected: /$2/"; fi
}
tap_done() { echo "1..$tap_n"; exit $tap_fail; }
skip_all() { echo "1..0 # SKIP $*"; exit 0; }

# Clients wait long for a dead controller (slurm-lab.md pitfall 3).
sl() { timeout 10 "$@"; }

# lab_claim_ports PREFERRED: a base port with base..base+LAB_NODES+3 free (slurmctld,
# the slurmd, slurmdbd, MariaDB, slurmrestd), claimed
# with a lock directory so that labs of concurrent test runs (make -j,
# two build trees on one machine) never share ports.
lab_claim_ports() {
	b=$1 tries=0
	while [ $tries -lt 40 ]; do
		lock=${TMPDIR:-/tmp}/tg-lab-port-$b
		if mkdir "$lock" 2>/dev/null; then
			echo $$ >"$lock/pid"
			busy=$(ss -Hltn 2>/dev/null | awk '{print $4}' |
				sed 's/.*://' | awk -v lo="$b" \
				-v hi=$((b + LAB_NODES + 3)) \
				'$1 >= lo && $1 <= hi' | head -1)
			if [ -z "$busy" ]; then
				lab_port=$b
				lab_lock=$lock
				return 0
			fi
			rm -rf "$lock"
		elif [ -f "$lock/pid" ] &&
		     ! kill -0 "$(cat "$lock/pid" 2>/dev/null)" 2>/dev/null; then
			rm -rf "$lock"	# left by a run that died
			continue
		fi
		b=$((b + 20))
		tries=$((tries + 1))
	done
	return 1
}

lab_init() {
	lab_name=$1
	lab_port=$2
	lab_lock=""
	TG_SRCDIR=${TG_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
	TG_BUILDDIR=${TG_BUILDDIR:-$TG_SRCDIR}
	TOPOGANG=${TOPOGANG:-$TG_BUILDDIR/cli/topogang}
	if [ "${LAB_SLURM:-2205}" = 2411 ]; then
		# Slurm 24.11 from its own prefix: daemons, clients, plugins
		s2411=${TOPOGANG_SLURM2411:-/opt/topogang/slurm-24.11}
		lab_sbin=$s2411/sbin
		plugdir=$TG_BUILDDIR/slurm_plugin/slurm2411/.libs
		debdir=$s2411/lib/slurm
		lab_plugins="topology_topogang.so preempt_topogang.so topogang_spank.so"
		[ -x "$lab_sbin/slurmctld" ] && [ -x "$s2411/bin/sbatch" ] ||
			skip_all "Slurm 24.11 is not built (scripts/bootstrap builds it into $s2411)"
		PATH=$s2411/bin:$PATH
		export PATH
		[ -f "$plugdir/topology_topogang.so" ] ||
			skip_all "topology_topogang.so not built (configure found no Slurm 24.11 tree: run scripts/bootstrap, then configure)"
	else
		lab_sbin=/usr/sbin
		plugdir=$TG_BUILDDIR/slurm_plugin/.libs
		debdir=/usr/lib/x86_64-linux-gnu/slurm-wlm
		lab_plugins="select_topogang.so topogang_spank.so"
		[ -x /usr/sbin/slurmctld ] && [ -x /usr/sbin/slurmd ] ||
			skip_all "Slurm is not installed (scripts/bootstrap installs slurmctld, slurmd, slurm-client)"
		command -v sbatch >/dev/null 2>&1 ||
			skip_all "slurm-client is not installed"
	fi
	[ "$(id -u)" -eq 0 ] ||
		skip_all "the loopback cluster runs slurmd as root; run as root"
	if [ "${LAB_ACCT:-none}" = dbd ]; then
		[ -x "$lab_sbin/slurmdbd" ] && [ -x /usr/sbin/mariadbd ] &&
		command -v sacctmgr >/dev/null 2>&1 ||
			skip_all "slurmdbd or mariadb-server is not installed (scripts/bootstrap installs them)"
	fi
	[ "${LAB_SLURM:-2205}" = 2411 ] || [ -f "$plugdir/select_topogang.so" ] ||
		skip_all "select_topogang.so not built (configure found no Slurm source tree: run scripts/bootstrap)"
	[ -f "$debdir/select_cons_tres.so" ] ||
		skip_all "no $debdir/select_cons_tres.so"
	if [ "${LAB_RESTD:-0}" = 1 ]; then
		[ -x "$lab_sbin/slurmrestd" ] ||
			skip_all "slurmrestd is not installed (scripts/bootstrap installs slurmrestd)"
		[ -f "$debdir/auth_jwt.so" ] ||
			skip_all "no $debdir/auth_jwt.so (slurm-wlm-jwt-plugin? scripts/bootstrap)"
		id nobody >/dev/null 2>&1 ||
			skip_all "no user nobody to run slurmrestd as"
	fi
	case $(readlink -f "$lab_sbin/slurmctld") in
	*emulator*) skip_all "/usr/sbin/slurmctld is the emulator (update-alternatives --set slurmctld /usr/sbin/slurmctld-wlm)" ;;
	esac
	lab_host=$(hostname -s)
	lab_claim_ports "$lab_port" ||
		skip_all "no free ports for the lab near $lab_port"
	LAB=$(mktemp -d "${TMPDIR:-/tmp}/tg-$lab_name.XXXXXX") || exit 1
	export SLURM_CONF=$LAB/etc/slurm.conf
	trap 'lab_stop; lab_keep; [ -z "$lab_lock" ] || rm -rf "$lab_lock"' EXIT
	trap 'exit 1' INT TERM HUP
}

# Keeps the lab directory of a failed run for reading (TG_KEEP_LAB=1
# keeps every run's).
lab_keep() {
	if [ "$tap_fail" = 0 ] && [ -z "${TG_KEEP_LAB:-}" ]; then
		rm -rf "$LAB"
	else
		echo "# lab kept in $LAB"
	fi
}

# lab_write [tree|none]: TopologyPlugin; topogang reads topology.conf
# either way.  24.11: [topogang|tree|block|default].
lab_write() {
	if [ "${LAB_SLURM:-2205}" = 2411 ]; then
		topo=${1:-topogang}
		lab_select=${LAB_SELECT:-select/cons_tres}
		# 24.11 has no switch/none (SwitchType left out)
		lab_switch=""
		lab_preempt=${LAB_PREEMPT:-preempt/topogang}
	else
		topo=${1:-tree}
		lab_select=${LAB_SELECT:-select/topogang}
		lab_switch="SwitchType=switch/none"
		lab_preempt=${LAB_PREEMPT:-preempt/partition_prio}
	fi
	mkdir -p "$LAB/etc" "$LAB/state" "$LAB/run" "$LAB/log" \
		"$LAB/plugins" "$LAB/fakedev" || return 1
	i=0
	while [ $i -lt $LAB_NODES ]; do
		mkdir -p "$LAB/spool/node-$i"
		i=$((i + 1))
	done
	for g in 0 1 2 3 4 5 6 7; do
		ln -sf /dev/null "$LAB/fakedev/gpu$g"
	done
	# A private PluginDir: every Debian plugin plus ours (slurm-lab.md
	# section 5, variant B: our own plugin_id, cons_tres beside it).
	# LAB_NO_CONS_TRES=1: every one but select_cons_tres.so (variant A:
	# select/topogang then takes cons_tres's plugin_id, topogang.conf(5)).
	for f in "$debdir"/*.so; do
		[ "${LAB_NO_CONS_TRES:-0}" = 1 ] &&
			[ "${f##*/}" = select_cons_tres.so ] && continue
		ln -sf "$f" "$LAB/plugins/"
	done
	for f in $lab_plugins; do
		cp "$plugdir/$f" "$LAB/plugins/" || return 1
	done
	last=$((lab_port + LAB_NODES))
	if [ "${LAB_AUTH:-none}" = munge ]; then
		# munged runs as the munge user: it must reach its directory
		chmod 711 "$LAB"
		mkdir -p "$LAB/munge"
		chown munge:munge "$LAB/munge"
		auth="AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$LAB/munge/sock"
	else
		auth="AuthType=auth/none
CredType=cred/none"
	fi
	if [ "${LAB_ACCT:-none}" = dbd ]; then
		acct="AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$((lab_port + LAB_NODES + 1))
AccountingStorageEnforce=associations,limits,qos"
		mkdir -p "$LAB/db"
		cat >"$LAB/etc/slurmdbd.conf" <<EOF
$(echo "$auth" | grep '^AuthType')
DbdAddr=127.0.0.1
DbdHost=$lab_host
DbdPort=$((lab_port + LAB_NODES + 1))
SlurmUser=root
DebugLevel=info
LogFile=$LAB/log/slurmdbd.log
PidFile=$LAB/db/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$((lab_port + LAB_NODES + 2))
StorageUser=slurm
StoragePass=topogang
StorageLoc=tg_acct_$lab_port
EOF
		chmod 600 "$LAB/etc/slurmdbd.conf"
	else
		acct="AccountingStorageType=accounting_storage/none"
	fi
	if [ "${LAB_RESTD:-0}" = 1 ]; then
		head -c 32 /dev/urandom >"$LAB/etc/jwt.key"
		chmod 600 "$LAB/etc/jwt.key"
		auth="$auth
AuthAltTypes=auth/jwt
AuthAltParameters=jwt_key=$LAB/etc/jwt.key"
		# slurmrestd runs as nobody: it reads slurm.conf
		chmod 755 "$LAB" "$LAB/etc"
		chmod 644 "$LAB/etc/"*.conf 2>/dev/null
		# ... but slurmdbd refuses a slurmdbd.conf others may read
		[ ! -f "$LAB/etc/slurmdbd.conf" ] ||
			chmod 600 "$LAB/etc/slurmdbd.conf"
	fi
	lab_restd_port=$((lab_port + LAB_NODES + 3))
	cat >"$LAB/etc/slurm.conf" <<EOF
ClusterName=tg$lab_port
SlurmctldHost=$lab_host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
$auth
SlurmctldPort=$lab_port
StateSaveLocation=$LAB/state
SlurmdSpoolDir=$LAB/spool/%n
SlurmctldPidFile=$LAB/run/slurmctld.pid
SlurmdPidFile=$LAB/run/slurmd-%n.pid
SlurmctldLogFile=$LAB/log/slurmctld.log
SlurmdLogFile=$LAB/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
PluginDir=$LAB/plugins
PlugStackConfig=$LAB/etc/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
$acct
JobCompType=jobcomp/none
MpiDefault=none
$lab_switch
SchedulerType=sched/backfill
SelectType=$lab_select
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1000
TopologyPlugin=topology/$topo
SlurmdParameters=config_overrides
ReturnToService=2
GresTypes=gpu
PreemptType=$lab_preempt
PreemptMode=REQUEUE
JobRequeue=1
MinJobAge=300
InactiveLimit=0
KillWait=2
SlurmdTimeout=60
NodeName=node-[0-$((LAB_NODES - 1))] NodeHostname=$lab_host NodeAddr=127.0.0.1 Port=[$((lab_port + 1))-$last] CPUs=8 Boards=1 SocketsPerBoard=1 CoresPerSocket=8 ThreadsPerCore=1 RealMemory=32000 Gres=gpu:8 State=UNKNOWN
PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP PriorityTier=1 PreemptMode=OFF
PartitionName=low Nodes=ALL MaxTime=INFINITE State=UP PriorityTier=1 PreemptMode=REQUEUE${LAB_LOW_GRACE:+ GraceTime=$LAB_LOW_GRACE}
PartitionName=high Nodes=ALL MaxTime=INFINITE State=UP PriorityTier=10 PreemptMode=OFF
EOF
	# The seed's fabric (three spines over five blocks, a core above)
	# is tests/slurm/seed-topology.conf, which the placement cases
	# (tests/scenarios/casefile.py) read too.
	cp "${LAB_TOPOLOGY:-$TG_SRCDIR/tests/slurm/seed-topology.conf}" \
		"$LAB/etc/topology.conf" || return 1
	# Two NVLink islands of four GPUs per node (gres.conf Links=: -1 is
	# the GPU itself, 4 an NVLink count, 0 no NVLink), one line per GPU.
	# Cores= is needed: without Cores= or Type= on its lines, 22.05 keeps
	# no per-GPU records in slurmctld (gres.c _get_tot_gres_cnt: topo_cnt
	# 0), so Links= is dropped and GPUs are picked by count alone.
	{
		echo "AutoDetect=off"
		for g in 0 1 2 3 4 5 6 7; do
			links=""
			for l in 0 1 2 3 4 5 6 7; do
				if [ $l = $g ]; then v=-1
				elif [ $((l / 4)) = $((g / 4)) ]; then v=4
				else v=0; fi
				links="$links${links:+,}$v"
			done
			echo "NodeName=node-[0-$((LAB_NODES - 1))] Name=gpu File=$LAB/fakedev/gpu$g Cores=0-7 Links=$links"
		done
	} >"$LAB/etc/gres.conf"
	cat >"$LAB/etc/topogang.conf" <<EOF
# select/topogang for the test lab
LayerName=block Layer=switch-l0
LayerName=spine Layer=switch-l1
ReserveTime=120
Debug=yes
EOF
	cat >"$LAB/etc/plugstack.conf" <<EOF
required $LAB/plugins/topogang_spank.so
EOF
}

lab_alive() {
	[ -f "$LAB/run/slurmctld.pid" ] &&
		kill -0 "$(cat "$LAB/run/slurmctld.pid")" 2>/dev/null
}

# lab_poll [-a] SECONDS CMD...: runs CMD every 0.2 s until it succeeds
# (0) or SECONDS have passed (1); with -a, 1 as soon as slurmctld is gone.
lab_poll() {
	lp_alive=false
	[ "$1" = -a ] && { lp_alive=true; shift; }
	lp_left=$(($1 * 5))
	shift
	while [ $lp_left -gt 0 ]; do
		"$@" && return 0
		$lp_alive && ! lab_alive && return 1
		sleep 0.2
		lp_left=$((lp_left - 1))
	done
	return 1
}

# lab_nodes_in STATES N: at least N nodes of partition batch in one of
# STATES (sinfo -t)
lab_nodes_in() {
	[ "$(sl sinfo -h -N -p batch -t "$1" -o %N 2>/dev/null | sort -u |
		wc -l)" -ge "$2" ]
}

# lab_wait_idle N SECONDS: N nodes IDLE in partition batch
lab_wait_idle() { lab_poll -a "$2" lab_nodes_in idle "$1"; }

# lab_slurmds: one slurmd per node
lab_slurmds() {
	i=0
	while [ $i -lt $LAB_NODES ]; do
		"$lab_sbin/slurmd" -N "node-$i" >>"$LAB/log/slurmd.out" 2>&1
		i=$((i + 1))
	done
}

lab_start() {
	lab_t0=$(date +%s)
	if [ "${LAB_AUTH:-none}" = munge ] &&
	   ! { [ -f "$LAB/munge/munged.pid" ] &&
	       kill -0 "$(cat "$LAB/munge/munged.pid")" 2>/dev/null; }; then
		runuser -u munge -- munged --socket="$LAB/munge/sock" \
			--pid-file="$LAB/munge/munged.pid" \
			--log-file="$LAB/munge/munged.log" \
			--seed-file="$LAB/munge/seed" ||
			{ diag "munged did not start"; return 1; }
	fi
	if [ "${LAB_ACCT:-none}" = dbd ]; then
		lab_dbd_start || { diag "slurmdbd did not start:";
			tail -5 "$LAB/log/slurmdbd.log" "$LAB/db/err.log" \
				2>/dev/null | sed 's/^/#   /'; return 1; }
	fi
	"$lab_sbin/slurmctld" -c >"$LAB/log/slurmctld.out" 2>&1
	lab_poll 10 lab_alive || { diag "slurmctld did not start:";
		tail -5 "$LAB/log/slurmctld.log" "$LAB/log/slurmctld.out" |
			sed 's/^/#   /'; return 1; }
	lab_slurmds
	lab_wait_idle $LAB_NODES 60 || { diag "nodes not IDLE:";
		sl sinfo -N -p batch 2>&1 | sed 's/^/#   /';
		tail -5 "$LAB/log/slurmctld.log" | sed 's/^/#   /'; return 1; }
	diag "lab up in $(($(date +%s) - lab_t0)) s: $LAB"
	return 0
}

# lab_no_jobs: no job runs, completes or is suspended
lab_no_jobs() {
	[ "$(sl squeue -h -t running,completing,suspended -o %i 2>/dev/null |
		wc -l)" -eq 0 ]
}

# Cancels every job and waits until no node is allocated or completing.
lab_drain() {
	[ -f "$LAB/run/slurmctld.pid" ] && lab_alive || return 0
	sl scancel --quiet --full $(sl squeue -h -o %i 2>/dev/null) \
		2>/dev/null
	lab_poll 20 lab_no_jobs
	lab_wait_idle $LAB_NODES 20
}

# find, not a glob: callers may run with `set -f` (tests/parity/slurm-path.sh)
lab_pids() {
	find "$LAB/run" -maxdepth 1 -type f \( -name 'slurmd-*.pid' -o \
		-name slurmctld.pid \) -exec cat {} + 2>/dev/null
}

lab_stop() {
	[ -n "${LAB:-}" ] && [ -d "$LAB/run" ] || return 0
	lab_restd_stop
	lab_drain >/dev/null 2>&1
	lab_kill
	lab_stop_dbd
	lab_stop_munge
	return 0
}

# lab_term PID...: SIGTERM, up to 5 s to go, then SIGKILL for the rest
# (slurmd ignores SIGTERM while it cannot register, pitfall 8).
lab_term() {
	[ $# -gt 0 ] || return 0
	kill "$@" 2>/dev/null
	i=0
	while [ $i -lt 50 ]; do
		alive=""
		for p in "$@"; do
			kill -0 "$p" 2>/dev/null && alive="$alive $p"
		done
		[ -z "$alive" ] && break
		sleep 0.1
		i=$((i + 1))
	done
	[ -n "$alive" ] && kill -9 $alive 2>/dev/null
	return 0
}

# Kills slurmctld and the slurmd by PID; jobs' slurmstepd keep running.
lab_kill() {
	# shellcheck disable=SC2046
	lab_term $(lab_pids)
	find "$LAB/run" -maxdepth 1 -type f -name '*.pid' -delete 2>/dev/null
	return 0
}

# lab_restart: the daemons again, keeping the state and the jobs (no -c),
# e.g. after a SelectType change (slurmd loads SelectType too).
lab_restart() {
	lab_kill
	"$lab_sbin/slurmctld" >>"$LAB/log/slurmctld.out" 2>&1
	lab_poll 10 lab_alive || return 1
	lab_slurmds
	lab_poll -a 30 lab_nodes_in idle,alloc,mix $LAB_NODES
}

lab_db_up() {
	mariadb --no-defaults -S "$LAB/db/sock" -u root -e 'select 1' \
		>/dev/null 2>&1
}

lab_dbd_up() { sl sacctmgr -n list cluster >/dev/null 2>&1; }

# lab_dbd_start: a private MariaDB (its own data directory, TCP on
# 127.0.0.1 only) and slurmdbd on it; the lab's cluster is added.
lab_dbd_start() {
	dbport=$((lab_port + LAB_NODES + 2))
	if [ ! -d "$LAB/db/data" ]; then
		mariadb-install-db --no-defaults --datadir="$LAB/db/data" \
			--user=root --auth-root-authentication-method=normal \
			--skip-test-db >"$LAB/db/install.log" 2>&1 || return 1
	fi
	/usr/sbin/mariadbd --no-defaults --datadir="$LAB/db/data" --user=root \
		--socket="$LAB/db/sock" --port="$dbport" \
		--bind-address=127.0.0.1 --pid-file="$LAB/db/pid" \
		--log-error="$LAB/db/err.log" --innodb-buffer-pool-size=16M \
		>/dev/null 2>&1 &
	lab_poll 20 lab_db_up
	mariadb --no-defaults -S "$LAB/db/sock" -u root -e "
		CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1'
			IDENTIFIED BY 'topogang';
		CREATE USER IF NOT EXISTS 'slurm'@'localhost'
			IDENTIFIED BY 'topogang';
		GRANT ALL ON *.* TO 'slurm'@'127.0.0.1';
		GRANT ALL ON *.* TO 'slurm'@'localhost';" || return 1
	"$lab_sbin/slurmdbd" >"$LAB/log/slurmdbd.out" 2>&1
	lab_poll 20 lab_dbd_up
	sl sacctmgr -i add cluster "tg$lab_port" >/dev/null 2>&1 || return 1
	return 0
}

lab_stop_dbd() {
	for f in "$LAB/db/slurmdbd.pid" "$LAB/db/pid"; do
		[ -f "$f" ] || continue
		lab_term "$(cat "$f")"
		rm -f "$f"
	done
}

lab_stop_munge() {
	[ -f "$LAB/munge/munged.pid" ] || return 0
	kill "$(cat "$LAB/munge/munged.pid")" 2>/dev/null
	rm -f "$LAB/munge/munged.pid"
}

# ---- jobs ----

# submit ARGS...: sbatch, prints the job id ("" and the error on failure)
submit() {
	sl sbatch --parsable -t 10 -o /dev/null "$@" 2>"$LAB/submit.err" |
		cut -d';' -f1
}

jstate() { sl squeue -h -j "$1" -o %T 2>/dev/null; }
jnodes() { sl squeue -h -j "$1" -o %N 2>/dev/null; }
# squeue shows "(REASON)"; the parentheses are dropped
jreason() {
	sl squeue -h -j "$1" -o %R 2>/dev/null | sed 's/^(\(.*\))$/\1/'
}

jstate_is() { [ "$(jstate "$1")" = "$2" ]; }
jstep_runs() { sl squeue -h -s -j "$1" -o %i 2>/dev/null | grep -qx "$1.batch"; }
jreason_is() { jreason "$1" | grep -Eq -e "$2"; }
ctld_logged() { grep -Eq -e "$1" "$LAB/log/slurmctld.log"; }

# wait_state ID STATE SECONDS
wait_state() { lab_poll -a "$3" jstate_is "$1" "$2"; }

# wait_step ID SECONDS: the job's batch step runs (its slurmstepd has
# read slurm.conf: edit slurm.conf only after this)
wait_step() { lab_poll -a "$2" jstep_runs "$1"; }

# wait_reason ID PATTERN SECONDS
wait_reason() { lab_poll -a "$3" jreason_is "$1" "$2"; }

# wait_log PATTERN SECONDS: slurmctld.log has a line matching (also once
# slurmctld is gone)
wait_log() { lab_poll "$2" ctld_logged "$1"; }

ctld_log() { grep -E -e "$1" "$LAB/log/slurmctld.log"; }

# hosts HOSTLIST: one comma-separated name list ("node-5,node-6")
hosts() { sl scontrol show hostnames "$1" 2>/dev/null | paste -sd, -; }

# cli_place ARGS...: topogang place on the lab's topology.conf, JSON
# summarized as "STATUS NODES VICTIM-NODES" (comma lists, "-" if none)
# and the message on a second line.
cli_place() {
	"$TOPOGANG" place --topology-conf "$LAB/etc/topology.conf" \
		--node cpu=8,memory=32000Mi,nvidia.com/gpu=8 \
		--output json "$@" 2>&1 | python3 -c '
import json, sys
try:
    g = json.load(sys.stdin)["gangs"][0]
except Exception as e:
    print("error", e)
    sys.exit(0)
nodes = ",".join(p["node"] for p in g["placements"]) or "-"
vict = ",".join(sorted(set(v.get("node", "?") for v in g["victims"]))) or "-"
print(g["status"], nodes, vict)
print(g["message"])
'
}

# ---- slurmrestd (LAB_RESTD=1) ----

lab_restd_alive() {
	[ -f "$LAB/run/slurmrestd.pid" ] &&
		kill -0 "$(cat "$LAB/run/slurmrestd.pid")" 2>/dev/null
}

# lab_restd_start: slurmrestd as nobody with rest_auth/jwt on
# 127.0.0.1:$lab_restd_port, a root token (1 h) in $LAB/etc/jwt.token;
# waits until it answers.  SLURM_JWT=daemon: without it every request
# is refused (slurm-lab.md section 8).  LAB_RESTD_DP=v0.0.40 (24.11):
# only that data_parser plugin (-d), instead of every one.
lab_restd_start() {
	if [ "${LAB_SLURM:-2205}" = 2411 ]; then
		lab_restd_ver=v0.0.40 lab_openapi=openapi/slurmctld
	else
		lab_restd_ver=v0.0.38 lab_openapi=openapi/v0.0.38
	fi
	chmod 644 "$LAB/etc/"*.conf
	if [ ! -s "$LAB/etc/jwt.token" ]; then
		sl scontrol token username=root lifespan=3600 \
			>"$LAB/etc/jwt.token" 2>"$LAB/log/token.err" ||
			{ diag "scontrol token failed: $(cat "$LAB/log/token.err")"; return 1; }
	fi
	runuser -u nobody -- env SLURM_CONF="$SLURM_CONF" SLURM_JWT=daemon \
		"$lab_sbin/slurmrestd" -a rest_auth/jwt -s "$lab_openapi" \
		${LAB_RESTD_DP:+-d "$LAB_RESTD_DP"} "127.0.0.1:$lab_restd_port" >>"$LAB/log/slurmrestd.log" 2>&1 &
	echo $! >"$LAB/run/slurmrestd.pid"
	tok=$(sed 's/^SLURM_JWT=//' "$LAB/etc/jwt.token")
	i=0
	while [ $i -lt 100 ]; do
		lab_restd_alive || break
		code=$(curl -s -o /dev/null -w '%{http_code}' -m 2 \
			-H "X-SLURM-USER-NAME: root" \
			-H "X-SLURM-USER-TOKEN: $tok" \
			"http://127.0.0.1:$lab_restd_port/slurm/$lab_restd_ver/ping")
		[ "$code" = 200 ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	diag "slurmrestd did not answer:"
	tail -5 "$LAB/log/slurmrestd.log" | sed 's/^/#   /'
	return 1
}

lab_restd_stop() {
	[ -f "${LAB:-/nonexistent}/run/slurmrestd.pid" ] || return 0
	p=$(cat "$LAB/run/slurmrestd.pid")
	# $! is runuser's pid; slurmrestd is its child
	# shellcheck disable=SC2046
	lab_term $(ps -o pid= --ppid "$p" 2>/dev/null) "$p"
	rm -f "$LAB/run/slurmrestd.pid"
	return 0
}
