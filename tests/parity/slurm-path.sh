#!/bin/sh
# tests/parity/slurm-path.sh - path (b) of the parity suite: one loopback
# Slurm lab (tests/slurm/lab.sh) for every scenario.  Reads one scenario
# a line on stdin:
#   NAME BUSY MEMBERS GATHER PRIO
# (BUSY: comma list of nodes running a low-priority exclusive job or "-";
# GATHER: LAYER:must|prefer or "-"; PRIO: high|normal) and prints
#   RESULT NAME STATUS NODES VICTIMS
# (STATUS placed|preempting|unschedulable|error:...; NODES, VICTIMS comma
# lists or "-").  Prints "SKIP why" when the lab cannot run, "LABERR why"
# when it does not start.  Run by run-parity, not by make check itself.
set -u
. "${TG_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/slurm/lab.sh"

# lab.sh's skip_all prints TAP; here the runner wants one line
# shellcheck disable=SC2317  # called from lab_init
skip_all() { echo "SKIP $*"; exit 0; }

lab_init parity 17400
lab_write tree
if ! lab_start >"$LAB/start.out" 2>&1; then
	echo "LABERR slurmctld or slurmd did not start: $(tr '\n' ' ' <"$LAB/start.out")"
	# shellcheck disable=SC2034  # read by lab.sh's exit trap: keep the lab
	tap_fail=1
	exit 0
fi
echo "INFO lab up: $LAB"

while read -r name busy members gather prio; do
	[ -n "$name" ] || continue
	lows=""
	if [ "$busy" != "-" ]; then
		for n in $(echo "$busy" | tr ',' ' '); do
			l=$(submit -p low -N1 -w "$n" --exclusive \
				--wrap "trap '' TERM; sleep 300")
			lows="$lows $l:$n"
		done
		for ln in $lows; do wait_state "${ln%%:*}" RUNNING 20; done
	fi
	part="batch"
	[ "$prio" = high ] && part=high
	set -- -p "$part" -N "$members" --exclusive
	[ "$gather" != "-" ] && set -- "$@" "--topo-gather=$gather"
	j=$(submit "$@" --wrap 'sleep 300')
	if [ -z "$j" ]; then
		echo "RESULT $name error:sbatch:$(tr ' \n' '__' <"$LAB/submit.err") - -"
		lab_drain >/dev/null 2>&1
		continue
	fi
	# RUNNING, or PENDING with topogang's reason for 4 s in a row
	left=200 stable=0 st=""
	while [ $left -gt 0 ]; do
		st=$(jstate "$j")
		[ "$st" = RUNNING ] && break
		if [ "$st" = PENDING ] && jreason "$j" | grep -q '^topogang: ' &&
		   ! grep -Eq "JobId=$j gather=.* preempting " \
			"$LAB/log/slurmctld.log" 2>/dev/null; then
			stable=$((stable + 1))
			[ $stable -ge 20 ] && break
		else
			stable=0
		fi
		sleep 0.2
		left=$((left - 1))
	done
	vict=""
	for ln in $lows; do
		if grep -Eq "preempted JobId=${ln%%:*} .*for JobId=$j( |\$)" \
			"$LAB/log/slurmctld.log"; then
			vict="$vict,${ln#*:}"
		fi
	done
	vict=${vict#,}
	if [ "$st" = RUNNING ]; then
		nodes=$(hosts "$(jnodes "$j")")
		status=placed
		[ -n "$vict" ] && status=preempting
	elif [ "$st" = PENDING ]; then
		nodes="-" status=unschedulable
		echo "INFO $name reason: $(jreason "$j")"
	else
		nodes="-" status="error:state:$st"
	fi
	echo "RESULT $name $status ${nodes:--} ${vict:--}"
	lab_drain >/dev/null 2>&1
done
exit 0
