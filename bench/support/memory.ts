import { readdirSync, readFileSync } from 'node:fs';

/** What `read` returns from /proc, or `gone` when the process exited meanwhile. */
function whileAlive<T>(read: () => T, gone: T): T {
  try {
    return read();
  } catch (error) {
    if (['ENOENT', 'ESRCH'].includes((error as NodeJS.ErrnoException).code ?? '')) return gone;
    throw error;
  }
}

const parentOf = (pid: string) =>
  whileAlive(() => {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  }, undefined);

const rssMiB = (pid: number) => whileAlive(() => Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024, 0);

/**
 * RSS in MiB of each child of `root` together with all its descendants: a service and whatever
 * it starts (a child that runs initdb, say) count as one.
 */
export function processTreesMiB(root = process.pid): Map<number, number> {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const parent = parentOf(entry);
    if (parent === undefined) continue;
    const siblings = children.get(parent) ?? [];
    siblings.push(Number(entry));
    children.set(parent, siblings);
  }
  const treeMiB = (pid: number): number => rssMiB(pid) + (children.get(pid) ?? []).reduce((sum, child) => sum + treeMiB(child), 0);
  return new Map((children.get(root) ?? []).map((child) => [child, treeMiB(child)]));
}

export interface MemoryTick {
  /** Seconds since sampling began. */
  atS: number;
  /** MiB of each child of this process with its descendants, by the child's pid. */
  trees: Map<number, number>;
}

/** Samples processTreesMiB every `intervalMs` until stopped. */
export function sampleMemory(intervalMs: number) {
  const started = performance.now();
  const ticks: MemoryTick[] = [];
  const sample = () => ticks.push({ atS: (performance.now() - started) / 1000, trees: processTreesMiB() });
  sample();
  const timer = setInterval(sample, intervalMs);
  return {
    stop: () => clearInterval(timer),
    ticks: () => ticks,
    /** The highest sample of `pid`'s tree. */
    peakMiB: (pid: number) => Math.max(0, ...ticks.map((tick) => tick.trees.get(pid) ?? 0)),
  };
}

export type MemorySampler = ReturnType<typeof sampleMemory>;

/**
 * The samples summed by group (`groupOf` names a pid's, or leaves it out), over the ticks where
 * the group had a process: one series per group, in the order groups first appear.
 */
export function memoryByGroup(ticks: MemoryTick[], groupOf: (pid: number) => string | undefined) {
  const series = new Map<string, Array<{ atS: number; rssMiB: number }>>();
  for (const { atS, trees } of ticks) {
    const sums = new Map<string, number>();
    for (const [pid, rssMiB] of trees) {
      const group = groupOf(pid);
      if (group !== undefined) sums.set(group, (sums.get(group) ?? 0) + rssMiB);
    }
    for (const [group, rssMiB] of sums) {
      const points = series.get(group) ?? [];
      points.push({ atS, rssMiB: Math.round(rssMiB * 10) / 10 });
      series.set(group, points);
    }
  }
  return [...series].map(([label, points]) => ({ label, points }));
}
