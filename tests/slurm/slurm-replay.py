#!/usr/bin/env python3
"""tests/slurm/slurm-replay.py - replay the first N jobs of a trace through
a running slurmctld and record, decision by decision, the nodes it chose
(issue #7: calibrating the simulator's slurm-tree policy).

    SLURM_CONF=... slurm-replay.py --trace CSV --jobs N --nodes NODES
        [--gpus-per-node 8] [--time-scale F] --out EVENTS

The cluster is node-0 .. node-(NODES-1), each with --gpus-per-node GPUs
and as many CPUs (tests/slurm/lab.sh).  Time is virtual: the replay walks
the trace's events (submits at submit_s / F, ends at start + duration_s)
and only the order matters, so a 90-day trace replays in minutes.  The
driver keeps the queue itself, as the simulator does (submit order; a job
that does not fit does not block later ones): at each event it submits,
one at a time, every pending job for which enough nodes have the GPUs
free, waits until slurmctld has started it, and reads the nodes it chose.
Ends are scancel; the next step waits until the job has left COMPLETING.
So slurmctld sees exactly one decision at a time, on a state the events
file describes completely, and `topogang sim --calibrate` can ask the
simulator's policy for the same decision on the same state.

A job asks for NODES members of GPUS/NODES GPUs (the trace's nodes
column; without it one node up to --gpus-per-node GPUs, else whole
nodes), one task per node with one CPU per GPU.  Jobs with more nodes than
the cluster are left out (a comment in the events file says so).

EVENTS lines:
    start JOB GPUS NODE[,NODE...]   slurmctld started JOB on these nodes
    end JOB                         JOB was cancelled (its trace end)
    pending JOB GPUS MEMBERS        slurmctld left JOB pending although
                                    enough nodes had the GPUs free (it is
                                    cancelled and retried later)
"""

import argparse
import csv
import heapq
import os
import re
import subprocess
import sys
import time


def run(*argv, check=True):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=30)
    if check and p.returncode:
        sys.exit("slurm-replay: %s failed (%d): %s" %
                 (" ".join(argv), p.returncode, p.stderr.strip()))
    return p.stdout


def expand(hostlist):
    """node-[1-3,7],node-9 -> [node-1, node-2, node-3, node-7, node-9]"""
    out = []
    for m in re.finditer(r'([^,\[]+)(?:\[([^\]]*)\])?', hostlist):
        prefix, rng = m.group(1), m.group(2)
        if rng is None:
            out.append(prefix)
            continue
        for part in rng.split(','):
            a, _, b = part.partition('-')
            for k in range(int(a), int(b or a) + 1):
                out.append('%s%0*d' % (prefix, len(a), k))
    return out


def load_jobs(path, n, nnodes, gpn):
    jobs, skipped = [], []
    with open(path, newline='') as f:
        for row in csv.DictReader(f):
            if len(jobs) + len(skipped) >= n:
                break
            gpus = int(row['gpus'])
            nodes = int(row['nodes']) if row.get('nodes') else 0
            if not nodes:
                nodes = 1 if gpus <= gpn else -(-gpus // gpn)
            if gpus % nodes or gpus // nodes > gpn or nodes > nnodes:
                skipped.append((row['job_id'], gpus, nodes))
                continue
            jobs.append(dict(id=row['job_id'], submit=float(row['submit_s']),
                             dur=float(row['duration_s']), m=nodes,
                             g=gpus // nodes, seq=len(jobs) + len(skipped)))
    return jobs, skipped


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--trace', required=True)
    ap.add_argument('--jobs', type=int, required=True)
    ap.add_argument('--nodes', type=int, required=True)
    ap.add_argument('--gpus-per-node', type=int, default=8)
    ap.add_argument('--time-scale', type=float, default=1.0)
    ap.add_argument('--out', required=True)
    a = ap.parse_args()
    if 'SLURM_CONF' not in os.environ:
        sys.exit('slurm-replay: SLURM_CONF is not set')

    jobs, skipped = load_jobs(a.trace, a.jobs, a.nodes, a.gpus_per_node)
    free = {'node-%d' % k: a.gpus_per_node for k in range(a.nodes)}
    ev = []			# (time, kind: 0 end, 1 submit, seq, job)
    for j in jobs:
        heapq.heappush(ev, (j['submit'] / a.time_scale, 1, j['seq'], j['id']))
    byid = {j['id']: j for j in jobs}
    pending, running = [], {}	# running: id -> (slurm id, nodes)
    out = open(a.out, 'w')
    out.write('# slurm-replay: %s, first %d jobs, %d nodes x %d GPUs, '
              'time scale %g\n' % (os.path.basename(a.trace), a.jobs,
                                   a.nodes, a.gpus_per_node, a.time_scale))
    for s in skipped:
        out.write('# skipped job %s: %d GPUs on %d nodes does not fit '
                  'the cluster\n' % s)
    t0 = time.time()
    nstart = npend = 0
    while ev:
        now = ev[0][0]
        ends, subs = [], []
        while ev and ev[0][0] == now:
            _, kind, _, jid = heapq.heappop(ev)
            (ends if kind == 0 else subs).append(jid)
        if ends:
            sids = [running[j][0] for j in ends]
            run('scancel', *sids)
            for _ in range(300):
                if not run('squeue', '-h', '-t', 'R,CG,CF', '-o', '%i',
                           '-j', ','.join(sids), check=False).split():
                    break
                time.sleep(0.05)
            else:
                sys.exit('slurm-replay: jobs %s still completing' % sids)
            for j in ends:
                for n in running.pop(j)[1]:
                    free[n] += byid[j]['g']
                out.write('end %s\n' % j)
        pending += subs
        pending.sort(key=lambda j: (byid[j]['submit'], byid[j]['seq']))
        for jid in list(pending):
            j = byid[jid]
            if sum(1 for v in free.values() if v >= j['g']) < j['m']:
                continue
            sid = run('sbatch', '--parsable', '-J', 'r%s' % jid, '-p',
                      'batch', '-N', str(j['m']), '--ntasks-per-node=1',
                      '-c', str(j['g']), '--gres=gpu:%d' % j['g'],
                      '-t', 'UNLIMITED', '-o', '/dev/null',
                      '--wrap', 'exec sleep 10000000').strip().split(';')[0]
            state, nodes = '', ''
            for _ in range(100):
                f = run('squeue', '-h', '-j', sid, '-o', '%T %N',
                        check=False).split()
                state = f[0] if f else ''
                nodes = f[1] if len(f) > 1 else ''
                if state in ('RUNNING', 'CONFIGURING') and nodes:
                    break
                time.sleep(0.05)
            if state not in ('RUNNING', 'CONFIGURING'):
                out.write('pending %s %d %d\n' % (jid, j['g'], j['m']))
                npend += 1
                run('scancel', sid)
                continue
            nl = expand(nodes)
            for n in nl:
                free[n] -= j['g']
                if free[n] < 0:
                    sys.exit('slurm-replay: %s over-committed by job %s'
                             % (n, jid))
            running[jid] = (sid, nl)
            pending.remove(jid)
            nstart += 1
            out.write('start %s %d %s\n' % (jid, j['g'], ','.join(nl)))
            out.flush()
            heapq.heappush(ev, (now + j['dur'], 0, j['seq'], jid))
    if running:
        run('scancel', *[s for s, _ in running.values()], check=False)
    out.write('# %d starts, %d left pending by slurmctld, %.0f s\n' %
              (nstart, npend, time.time() - t0))
    out.close()
    print('slurm-replay: %d jobs (%d skipped), %d starts, %d pending, '
          '%.0f s' % (len(jobs), len(skipped), nstart, npend,
                      time.time() - t0))


if __name__ == '__main__':
    main()
