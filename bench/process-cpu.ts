// CPU time of a process and everything it started (a server and its cluster workers, a postmaster and
// its backends), read from /proc: the bench reports CPU per operation, which survives a noisy shared
// machine better than throughput. Elsewhere than Linux the figures are unavailable (null).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

let ticksPerSecond: number | undefined;

function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

interface ProcStat {
  pid: number;
  ppid: number;
  /** user + system, with that of its children that have exited (reaped), in clock ticks */
  ticks: number;
}

function readStat(pid: number): ProcStat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may contain spaces: the fields start after the last ')'.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    // utime, stime, then cutime and cstime: a pool's backend that ended counts in its postmaster's.
    const ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    return { pid, ppid: Number(fields[1]), ticks };
  } catch {
    return undefined;
  }
}

/** Milliseconds of CPU used so far by the process and its live descendants; null where /proc is absent. */
export function treeCpuMs(rootPid: number): number | null {
  if (process.platform !== 'linux') return null;
  const stats: ProcStat[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat) stats.push(stat);
  }
  const children = new Map<number, ProcStat[]>();
  for (const stat of stats) children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), stat]);
  let ticks = 0;
  const pending = stats.filter((s) => s.pid === rootPid);
  for (let s = pending.pop(); s; s = pending.pop()) {
    ticks += s.ticks;
    pending.push(...(children.get(s.pid) ?? []));
  }
  return (ticks * 1000) / clockTicks();
}

/**
 * Milliseconds of CPU used so far by each of these processes (the Postgres backends serving one client:
 * its own work, not autovacuum's or the checkpointer's, which land at random moments).
 */
export function processesCpuMs(pids: readonly number[]): Map<number, number> {
  const used = new Map<number, number>();
  if (process.platform !== 'linux') return used;
  for (const pid of pids) {
    const stat = readStat(pid);
    if (stat) used.set(pid, (stat.ticks * 1000) / clockTicks());
  }
  return used;
}
