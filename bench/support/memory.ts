import { readdirSync, readFileSync } from 'node:fs';

/** The parent of a process, or undefined once it has exited. */
function parentOf(pid: string): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined; // exited meanwhile
  }
}

function rssMiB(pid: number): number {
  try {
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
  } catch {
    return 0; // exited meanwhile
  }
}

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

export interface MemoryPoint {
  /** Seconds since sampling began. */
  atS: number;
  rssMiB: number;
}

/**
 * Samples processTreesMiB every `intervalMs` until stopped: the points of each child of this
 * process (by pid), and the highest of them.
 */
export function sampleMemory(intervalMs: number) {
  const started = performance.now();
  const points = new Map<number, MemoryPoint[]>();
  const sample = () => {
    const atS = (performance.now() - started) / 1000;
    for (const [pid, rssMiB] of processTreesMiB()) {
      const series = points.get(pid) ?? [];
      series.push({ atS, rssMiB });
      points.set(pid, series);
    }
  };
  sample();
  const timer = setInterval(sample, intervalMs);
  return {
    stop: () => clearInterval(timer),
    points: (pid: number) => points.get(pid) ?? [],
    peakMiB: (pid: number) => Math.max(0, ...(points.get(pid) ?? []).map((point) => point.rssMiB)),
  };
}
