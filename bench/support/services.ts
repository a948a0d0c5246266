import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:net';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (typeof address !== 'object' || !address) throw new Error('no port');
  return address.port;
}

export async function waitUntil(check: () => Promise<boolean> | boolean, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await Promise.resolve().then(check).catch(() => false)) return;
    await sleep(50);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

/** VmRSS and VmHWM (peak resident set) of a live process, in MiB. */
export function memoryOf(pid: number): { rssMiB: number; peakMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMiB: kb('VmRSS') / 1024, peakMiB: kb('VmHWM') / 1024 };
}

export interface Service {
  role: string;
  pid: number;
  url: string;
  /** RSS right after start (idle, before load). */
  idleMiB: number;
  log: string;
  /** Reads the peak RSS, then stops the process (SIGTERM, SIGKILL after a grace) by its own pid. */
  stop(): Promise<{ idleMiB: number; peakMiB: number }>;
}

/** Starts dist/src/main/{web,worker}.js with its log in a file; a web process is waited on until /healthz answers. */
export async function startService(
  entry: 'web' | 'worker',
  env: Record<string, string>,
  log: string,
  label: string = entry,
  nodeArgs: string[] = [],
): Promise<Service> {
  const port = entry === 'web' ? await freePort() : 0;
  const fd = openSync(log, 'a');
  const logOffset = statSync(log).size;
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, `dist/src/main/${entry}.js`], {
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: String(port), ...env },
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const alive = () => child.exitCode === null && child.signalCode === null;
  const url = `http://127.0.0.1:${port}`;
  if (entry === 'web') {
    await waitUntil(async () => {
      if (!alive()) return true; // reported just below
      return (await fetch(`${url}/healthz`)).ok;
    }, 30_000, `${label} to answer /healthz (log: ${log})`);
  } else {
    await waitUntil(() => !alive() || readFileSync(log, 'utf8').slice(logOffset).includes('worker started'), 30_000, `${label} to start (log: ${log})`);
  }
  if (!alive()) throw new Error(`${label} exited during start; see ${log}`);
  const idleMiB = memoryOf(child.pid!).rssMiB;
  return {
    role: label,
    pid: child.pid!,
    url,
    idleMiB,
    log,
    async stop() {
      if (!alive()) throw new Error(`${label} (pid ${child.pid}) had already exited; see ${log}`);
      const { peakMiB } = memoryOf(child.pid!);
      process.kill(child.pid!, 'SIGTERM');
      const timer = setTimeout(() => alive() && process.kill(child.pid!, 'SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
      return { idleMiB, peakMiB };
    },
  };
}
