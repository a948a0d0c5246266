import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ; 100 on Linux). */
const TICKS = 100;

export interface CpuSnapshot {
  at: number;
  /** CPU seconds (user + system) so far of each accounted process, with its group. */
  processes: Map<string, { group: string; seconds: number }>;
  /** Machine-wide busy and total CPU seconds from /proc/stat. */
  busy: number;
  total: number;
}

function processTimes(pid: string) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    const fields = stat.slice(close + 2).split(' ');
    return { comm, seconds: (Number(fields[11]) + Number(fields[12])) / TICKS };
  } catch {
    return undefined; // exited meanwhile
  }
}

/**
 * A PostgreSQL process counts as ours when it is a backend of our database or one of the
 * server's own background processes; other databases' backends (other people's test runs on
 * the same server) do not.
 */
function postgresIsOurs(pid: string, database: string | undefined) {
  try {
    const title = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    if (database && title.includes(database)) return true;
    return !/\d+\.\d+\.\d+\.\d+\(\d+\)|\[local\]/.test(title); // not a client backend
  } catch {
    return false;
  }
}

/**
 * CPU used so far by each group: the named pids (pid -> group), plus the PostgreSQL processes
 * serving `database` (and the server's background ones) and redis-server.
 */
export function cpuSnapshot(pids: ReadonlyMap<number, string>, database?: string): CpuSnapshot {
  const processes = new Map<string, { group: string; seconds: number }>();
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const times = processTimes(pid);
    if (!times) continue;
    const group =
      pids.get(Number(pid)) ??
      (times.comm === 'postgres' ? (postgresIsOurs(pid, database) ? 'postgres' : undefined) : times.comm === 'redis-server' ? 'redis' : undefined);
    if (group) processes.set(pid, { group, seconds: times.seconds });
  }
  const cpuLine = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.split(/\s+/).slice(1).map(Number);
  const idle = (cpuLine[3] ?? 0) + (cpuLine[4] ?? 0);
  const total = cpuLine.reduce((sum, value) => sum + value, 0);
  return { at: performance.now(), processes, busy: (total - idle) / TICKS, total: total / TICKS };
}

/**
 * CPU milliseconds per operation by group over one or more measured windows (each a pair of
 * snapshots), an "other" group for whatever else the machine did meanwhile (other processes,
 * the kernel), and the machine's utilisation.
 */
export function cpuPerOp(windows: [CpuSnapshot, CpuSnapshot][], ops: number) {
  const used: Record<string, number> = {};
  let busy = 0;
  let total = 0;
  for (const [before, after] of windows) {
    // Per process, so one that exits in the window (a pool closing an idle connection) does
    // not take its earlier CPU out of its group's sum; one that starts in it counts from 0.
    for (const [pid, { group, seconds }] of after.processes) {
      used[group] = (used[group] ?? 0) + Math.max(0, seconds - (before.processes.get(pid)?.seconds ?? 0));
    }
    busy += after.busy - before.busy;
    total += after.total - before.total;
  }
  const round = (value: number) => Math.round(value * 1000) / 1000;
  const perOpMs: Record<string, number> = {};
  for (const [group, value] of Object.entries(used)) if (value > 0) perOpMs[group] = round((value * 1000) / ops);
  const ours = Object.values(used).reduce((sum, value) => sum + value, 0);
  perOpMs.other = round((Math.max(0, busy - ours) * 1000) / ops);
  return { perOpMs, utilisation: round(busy / total) };
}

/** Share of the machine's CPU that processes outside `pids` (and our database) use, over `windowMs`. */
export async function foreignLoad(pids: ReadonlyMap<number, string>, database: string | undefined, windowMs: number) {
  const before = cpuSnapshot(pids, database);
  await new Promise((resolve) => setTimeout(resolve, windowMs));
  const after = cpuSnapshot(pids, database);
  let ours = 0;
  for (const [pid, { seconds }] of after.processes) ours += Math.max(0, seconds - (before.processes.get(pid)?.seconds ?? 0));
  return Math.max(0, (after.busy - before.busy - ours) / (after.total - before.total));
}

export type CpuWindow = [CpuSnapshot, CpuSnapshot];

export interface CpuRow {
  figure: string;
  ops: number;
  utilisation: number;
  perOpMs: Record<string, number>;
}

/**
 * One run's CPU accounting: which processes count as ours (by group: web, worker, receiver,
 * bench), measured windows, and the table of CPU per operation they add up to.
 */
export function createCpuMeter() {
  const pids = new Map<number, string>([[process.pid, 'bench']]);
  const rows: CpuRow[] = [];
  let database: string | undefined;
  const snapshot = () => cpuSnapshot(pids, database);
  return {
    pids: pids as ReadonlyMap<number, string>,
    track: (group: string, pid: number) => void pids.set(pid, group),
    untrack: (pid: number) => void pids.delete(pid),
    /** PostgreSQL backends of this database count as ours. */
    countDatabase: (name: string) => void (database = name),
    snapshot,
    /** Runs a measured window and adds its snapshots to `windows`. */
    async metered<T>(windows: CpuWindow[], window: () => Promise<T>): Promise<T> {
      const before = snapshot();
      const result = await window();
      windows.push([before, snapshot()]);
      return result;
    },
    /** Adds a row of CPU per operation over `windows` to the table, and returns it. */
    record(figure: string, windows: CpuWindow[], ops: number): CpuRow {
      const row = { figure, ops, ...cpuPerOp(windows, ops) };
      rows.push(row);
      return row;
    },
    /** The table so far. */
    rows: () => [...rows],
  };
}

export type CpuMeter = ReturnType<typeof createCpuMeter>;

/** The machine's CPU time so far, busy and total, in clock ticks (/proc/stat): other work skews the figures. */
export function machineTicks() {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
  const total = fields.reduce((sum, value) => sum + value, 0);
  return { busy: total - idle, total };
}
