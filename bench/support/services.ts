import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { entryPoint, launch, launchWeb, waitForOutput, type LaunchedProcess } from '../../kit/processes.js';
import type { CpuMeter } from './cpu.js';

/** VmRSS and VmHWM (peak resident set) of a live process, in MiB. */
export function memoryOf(pid: number): { rssMiB: number; peakMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMiB: kb('VmRSS') / 1024, peakMiB: kb('VmHWM') / 1024 };
}

export interface MemoryRow {
  process: string;
  idleMiB: number;
  peakMiB: number;
}

export interface Service {
  /** What the memory table calls it, e.g. "worker (PostgreSQL + Redis)". */
  label: string;
  pid: number;
  /** The web process's base URL; empty for a worker. */
  url: string;
  log: string;
}

/**
 * The service processes of one run: started from dist/ with their logs in `logDir` (a file per
 * process, numbered in start order), counted in the CPU table while they run, and their peak memory read just before each
 * is stopped. `stopAll` ends whatever is still running (the run failed part way).
 */
export function createServices(logDir: string, cpu: CpuMeter) {
  const running = new Map<Service, { launched: LaunchedProcess; idleMiB: number }>();
  const memory = new Map<string, MemoryRow>();
  const everStarted: Array<{ entry: 'web' | 'worker'; label: string; pid: number }> = [];
  let started = 0;

  /** `nodeArgs`: flags for node itself, as a start command gives them (the embedded default's, say). */
  async function start(entry: 'web' | 'worker', env: Record<string, string>, label: string, nodeArgs: string[] = []): Promise<Service> {
    started++;
    const log = join(logDir, `${String(started).padStart(2, '0')}-${label.replace(/\W+/g, '-').replace(/-$/, '')}.log`);
    // BENCH_CPU_PROF=<dir>: every service writes a V8 CPU profile there when it stops (node --cpu-prof).
    const profileDir = process.env.BENCH_CPU_PROF;
    const profiling = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${entry}-${started}.cpuprofile`] : [];
    const options = { label, logFile: log, nodeArgs: [...nodeArgs, ...profiling] };
    let launched: LaunchedProcess & { url?: string };
    if (entry === 'web') {
      launched = await launchWeb(env, options);
    } else {
      launched = launch(entryPoint('worker'), env, options);
      await waitForOutput(launched, 'worker started').catch(async (error: unknown) => {
        await launched.stop('SIGKILL');
        throw error;
      });
    }
    const service: Service = { label, pid: launched.pid, url: launched.url ?? '', log };
    running.set(service, { launched, idleMiB: memoryOf(launched.pid).rssMiB });
    everStarted.push({ entry, label, pid: launched.pid });
    cpu.track(entry, launched.pid);
    return service;
  }

  async function stop(service: Service) {
    const entry = running.get(service);
    if (!entry) throw new Error(`${service.label} (pid ${service.pid}) is not running`);
    running.delete(service);
    if (!entry.launched.alive()) throw new Error(`${service.label} (pid ${service.pid}) had already exited; see ${service.log}`);
    const { peakMiB } = memoryOf(service.pid);
    await entry.launched.stop('SIGTERM', { killAfterMs: 15_000 });
    cpu.untrack(service.pid);
    const seen = memory.get(service.label);
    memory.set(service.label, {
      process: service.label,
      idleMiB: Math.max(seen?.idleMiB ?? 0, entry.idleMiB),
      peakMiB: Math.max(seen?.peakMiB ?? 0, peakMiB),
    });
  }

  return {
    start,
    stop,
    /** Stops every service still running, without reading its memory: for cleaning up after a failure. */
    async stopAll() {
      const left = [...running.values()];
      running.clear();
      await Promise.all(left.map(({ launched }) => launched.stop('SIGKILL')));
    },
    /** Signals every running service at once, synchronously (the bench itself is being interrupted). */
    killAll: () => {
      for (const { launched } of running.values()) launched.child.kill('SIGTERM');
    },
    /** Peak and idle RSS per label, the highest over all of that label's runs. */
    memory: () => [...memory.values()],
    /** Every service started in the run, stopped or not: for telling the memory samples' pids apart. */
    started: () => [...everStarted],
  };
}

export type Services = ReturnType<typeof createServices>;
