#!/bin/sh
# tests/parity/slurm-path.sh - paths (b) and (b2) of the parity suite: one
# loopback Slurm lab (tests/slurm/lab.sh; 24.11 with LAB_SLURM=2411) for
# every scenario.  Reads the scenarios
# on stdin, written by run-parity:
#   S NAME              a scenario starts
#   R NODES ARGS...     a running job: sbatch ARGS (partition, -w NODES,
#                       shape), NODES a comma list
#   J ARGS...           the request: sbatch ARGS (" : " between the
#                       components of a heterogeneous job); runs it
# and prints for each
#   RESULT NAME STATUS NODES VICTIMS
# (STATUS placed|preempting|unschedulable|error:...; NODES, VICTIMS comma
# lists or "-"; a victim is every node of a preempted running job).
# Prints "SKIP why" when the lab cannot run, "LABERR why" when it does not
# start.  Run by run-parity, not by make check itself.
set -u
. "${TG_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/slurm/lab.sh"

# lab.sh's skip_all prints TAP; here the runner wants one line
# shellcheck disable=SC2317  # called from lab_init
skip_all() { echo "SKIP $*"; exit 0; }

# LAB_SLURM=2411 (run-parity's slurm-24.11 path): Slurm 24.11 with
# select/cons_tres, topology/topogang and preempt/topogang
if [ "${LAB_SLURM:-2205}" = 2411 ]; then
	lab_init parity2411 17600
	lab_write topogang
else
	lab_init parity 17400
	lab_write tree
fi
# a second preemptible tier between low (1) and high (10); batch jobs
# scheduled at once rather than up to 3 s later (batch_sched_delay), and
# heterogeneous jobs, which only the backfill scheduler starts, within a
# second (bf_interval)
cat >>"$LAB/etc/slurm.conf" <<EOF
PartitionName=mid Nodes=ALL MaxTime=INFINITE State=UP PriorityTier=5 PreemptMode=REQUEUE
SchedulerParameters=batch_sched_delay=0,bf_interval=1
EOF
if ! lab_start >"$LAB/start.out" 2>&1; then
	echo "LABERR slurmctld or slurmd did not start: $(tr '\n' ' ' <"$LAB/start.out")"
	# shellcheck disable=SC2034  # read by lab.sh's exit trap: keep the lab
	tap_fail=1
	exit 0
fi
echo "INFO lab up: $LAB"
set -f	# from here on node lists and sbatch arguments are never globbed

# squeue of a job, one line per component of a heterogeneous job
# shellcheck disable=SC2317  # called from settled, through lab_poll
jstates() { sl squeue -h -j "$1" -o %T 2>/dev/null | sort -u | paste -sd' ' -; }

# sleeper ARGS...: sbatch ARGS of a job that sleeps; its id ("" and
# $LAB/submit.err on failure)
sleeper() { submit "$@" --wrap 'sleep 300'; }

# settled: job $j is RUNNING ($st), or PENDING with topogang's reason and
# not preempting for the 15th call in a row (3 s of lab_poll)
# shellcheck disable=SC2317  # called through lab_poll
settled() {
	st=$(jstates "$j")
	[ "$st" = RUNNING ] && return 0
	if [ "$st" = PENDING ] &&
	   sl squeue -h -j "$j" -o %R 2>/dev/null | grep -q '^(topogang: ' &&
	   ! grep -Eq "JobId=$j(\\+[0-9]+)? gather=.* preempting " \
		"$LAB/log/slurmctld.log" 2>/dev/null; then
		stable=$((stable + 1))
		[ "$stable" -ge 15 ]
		return
	fi
	stable=0
	return 1
}

# run_request ARGS...: the request of scenario $name, its result line
run_request() {
	j=$(sleeper "$@")
	if [ -z "$j" ]; then
		echo "RESULT $name error:sbatch:$(tr ' \n' '__' <"$LAB/submit.err") - -"
		return
	fi
	stable=0 st=""
	lab_poll 40 settled
	vict=""
	for r in $runs; do
		if grep -Eq "preempted JobId=${r%%:*} .*for JobId=$j(\\+[0-9]+)?( |\$)" \
			"$LAB/log/slurmctld.log"; then
			vict="$vict,${r#*:}"
		fi
	done
	vict=${vict#,}
	if [ "$st" = RUNNING ]; then
		nodes=$(for h in $(sl squeue -h -j "$j" -o %N 2>/dev/null); do
			hosts "$h"; done | paste -sd, -)
		status=placed
		[ -n "$vict" ] && status=preempting
	elif [ "$st" = PENDING ]; then
		nodes="-" status=unschedulable
		echo "INFO $name reason: $(jreason "$j" | head -1)"
	else
		nodes="-" status="error:state:$(echo "$st" | tr ' ' '_')"
	fi
	echo "RESULT $name $status ${nodes:--} ${vict:--}"
}

name="" runs=""
while read -r tag rest; do
	case $tag in
	S)
		name=$rest runs=""
		t0=$(date +%s%N)
		;;
	R)
		# shellcheck disable=SC2086  # the arguments, split on purpose
		set -- $rest
		nodes=$1
		shift
		r=$(sleeper "$@")
		if [ -z "$r" ]; then
			echo "INFO $name: running job on $nodes: $(cat "$LAB/submit.err")"
			continue
		fi
		runs="$runs $r:$nodes"
		;;
	J)
		for r in $runs; do wait_state "${r%%:*}" RUNNING 20; done
		# 24.11's topology/topogang notes running jobs every 500 ms
		# (RUN_SCAN_MS): a preemptor sooner than that can find them
		# missing and Slurm's own order picks the victims
		# (docs/slurm.md, "Known gap")
		[ "${LAB_SLURM:-}" != 2411 ] || sleep 1
		t1=$(date +%s%N)
		# shellcheck disable=SC2086  # the arguments, split on purpose
		run_request $rest
		t2=$(date +%s%N)
		lab_drain >/dev/null 2>&1
		echo "INFO $name: $(( (t1 - t0) / 1000000 )) ms running jobs, $(( (t2 - t1) / 1000000 )) ms request, $(( ($(date +%s%N) - t2) / 1000000 )) ms drain"
		;;
	esac
done
exit 0
