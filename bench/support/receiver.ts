import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { BenchCertificate } from './tls.js';

export interface ReceiverStats {
  count: number;
  duplicates: number;
  firstAt: number;
  lastAt: number;
}

export interface Receiver {
  url: string;
  pid: number;
  reset(): Promise<void>;
  stats(): Promise<ReceiverStats>;
  /** First receipt time (monotonic ms) of every `path id` key starting with prefix. */
  times(prefix: string): Promise<Map<string, number>>;
  waitForCount(count: number, timeoutMs: number): Promise<ReceiverStats>;
  close(): Promise<void>;
}

/** Starts the HTTPS receiver as a child process and talks to it over IPC. */
export async function startReceiver(certificate: BenchCertificate): Promise<Receiver> {
  const child: ChildProcess = fork(fileURLToPath(new URL('./receiverServer.js', import.meta.url)), [], {
    env: { PATH: process.env.PATH ?? '', RECEIVER_KEY_PATH: certificate.keyPath, RECEIVER_CERT_PATH: certificate.certPath },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ask = <T>(message: object, answer: string) =>
    new Promise<T>((resolve, reject) => {
      const onMessage = (reply: { type: string }) => {
        if (reply.type !== answer) return;
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve(reply as T);
      };
      const onExit = () => reject(new Error('receiver exited'));
      child.on('message', onMessage);
      child.once('exit', onExit);
      if (Object.keys(message).length > 0) child.send(message);
    });
  const { port } = await ask<{ port: number }>({}, 'listening');
  const stats = () => ask<ReceiverStats>({ type: 'stats' }, 'stats');
  return {
    url: `https://127.0.0.1:${port}`,
    pid: child.pid!,
    reset: () => ask({ type: 'reset' }, 'reset'),
    stats,
    async times(prefix) {
      const { entries } = await ask<{ entries: [string, number][] }>({ type: 'times', prefix }, 'times');
      return new Map(entries);
    },
    async waitForCount(count, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const current = await stats();
        if (current.count >= count || Date.now() > deadline) return current;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async close() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.send({ type: 'close' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
