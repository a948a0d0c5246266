import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { waitUntil } from './waiting.js';

/** A port free right now on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (typeof address !== 'object' || !address) throw new Error('no free port');
  return address.port;
}

export interface LaunchOptions {
  args?: string[];
  nodeArgs?: string[];
  cwd?: string;
  /** Names the process in messages; the script by default. */
  label?: string;
  /** A process meant to end by itself (a command, a start that must fail): its exit is no finding. */
  endsByItself?: boolean;
  /**
   * Appends stdout to this file instead of keeping it in memory, so a long run's logs cost the
   * launching process nothing (stderr, which only failures write, stays in memory).
   */
  logFile?: string;
}

export interface LaunchedProcess {
  child: ChildProcess;
  pid: number;
  label: string;
  /** What it wrote so far: stdout and stderr as they came, or with logFile its part of the file, then its stderr. */
  output(): string;
  stdout(): string;
  stderr(): string;
  alive(): boolean;
  /** Resolves with the exit code (or signal) once the process has ended. */
  exited: Promise<number | NodeJS.Signals>;
  /** Sends `signal` (SIGTERM by default) unless it has ended; with `killAfterMs`, SIGKILL if it is still running then. */
  stop(signal?: NodeJS.Signals, options?: { killAfterMs?: number }): Promise<number | NodeJS.Signals>;
}

/**
 * Starts `node <script>` as a child process with exactly `env` (plus PATH), so nothing of the
 * launcher's environment (a DATABASE_URL, a token) leaks in by accident. A process that ends
 * with a failure before anyone stopped it prints its output's tail: it is a finding, whatever
 * the caller then reports.
 */
export function launch(script: string, env: Record<string, string>, options: LaunchOptions = {}): LaunchedProcess {
  const label = options.label ?? script;
  const logFd = options.logFile === undefined ? undefined : openSync(options.logFile, 'a');
  const logOffset = options.logFile === undefined ? 0 : statSync(options.logFile).size;
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), script, ...(options.args ?? [])], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', logFd ?? 'pipe', 'pipe'],
  });
  if (logFd !== undefined) closeSync(logFd);
  let output = '';
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
    stdout += chunk;
  });
  child.stderr!.on('data', (chunk) => {
    output += chunk;
    stderr += chunk;
  });
  const readStdout = () => (options.logFile === undefined ? stdout : readFileSync(options.logFile, 'utf8').slice(logOffset));
  const readOutput = () => (options.logFile === undefined ? output : readStdout() + stderr);
  let stopping = false;
  const exited = new Promise<number | NodeJS.Signals>((resolve) =>
    child.on('exit', (code, signal) => {
      if (!stopping && !options.endsByItself && code !== 0)
        console.error(`[${label} ${child.pid}] exited with ${code ?? signal}:\n${readOutput().slice(-4000)}`);
      resolve(code ?? signal!);
    }),
  );
  const alive = () => child.exitCode === null && child.signalCode === null;
  return {
    child,
    pid: child.pid!,
    label,
    output: readOutput,
    stdout: readStdout,
    stderr: () => stderr,
    alive,
    exited,
    async stop(signal = 'SIGTERM', { killAfterMs }: { killAfterMs?: number } = {}) {
      stopping = true;
      if (alive()) child.kill(signal);
      const timer = killAfterMs === undefined ? undefined : setTimeout(() => alive() && child.kill('SIGKILL'), killAfterMs);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
  };
}

/** The built entry points a test or benchmark runs. */
export const entryPoint = (entry: 'web' | 'worker' | 'migrate') => `dist/src/main/${entry}.js`;

/**
 * The built web process on a free port of 127.0.0.1, once /healthz answers; fails at once if it
 * exits while starting, with its output.
 */
export async function launchWeb(env: Record<string, string>, options: LaunchOptions & { timeoutMs?: number } = {}) {
  const port = await freePort();
  const web = launch(entryPoint('web'), { HOST: '127.0.0.1', PORT: String(port), ...env }, { label: 'web', ...options });
  const url = `http://127.0.0.1:${port}`;
  // Refused connections are what a starting server answers; the wait is for the first 200.
  const answers = async () => (await fetch(`${url}/healthz`).catch(() => undefined))?.ok === true;
  try {
    await waitUntil(
      async () => !web.alive() || (await answers()),
      options.timeoutMs ?? 30_000,
      () => `web did not answer /healthz:\n${web.output()}`,
    );
    if (!web.alive()) throw new Error(`web exited while starting:\n${web.output()}`);
  } catch (error) {
    await web.stop('SIGKILL');
    throw error;
  }
  return { ...web, url };
}

/** Waits until the process has written `text` (a worker's "worker started"); fails if it exits first. */
export async function waitForOutput(service: LaunchedProcess, text: string, timeoutMs = 30_000) {
  await waitUntil(
    () => !service.alive() || service.output().includes(text),
    timeoutMs,
    () => `${service.label} never wrote "${text}":\n${service.output()}`,
  );
  if (!service.alive()) throw new Error(`${service.label} exited before writing "${text}":\n${service.output()}`);
}
