import { fork, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Certificate } from './tls.js';
import { sleep } from './waiting.js';

export interface ReceiverStats {
  count: number;
  duplicates: number;
  /** Monotonic ms of the first and last receipt. */
  firstAt: number;
  lastAt: number;
}

export interface Receiver {
  url: string;
  pid: number;
  reset(): Promise<void>;
  /** Receipts since the last reset: all of them, or one channel's (a path's first segment, such as '/d'). */
  stats(channel?: string): Promise<ReceiverStats>;
  /** First receipt time (monotonic ms) of every `path id` key starting with prefix. */
  times(prefix: string): Promise<Map<string, number>>;
  /** Waits until `count` receipts (of the channel) arrived, or `timeoutMs` passed; says how many did. */
  waitForCount(count: number, timeoutMs: number, channel?: string): Promise<ReceiverStats>;
  close(): Promise<void>;
}

/** The receiver's compiled script: beside this module when it runs from dist/, under dist/ when it runs from sources (tests). */
function receiverScript() {
  const beside = fileURLToPath(new URL('./arrivalReceiverProcess.js', import.meta.url));
  return existsSync(beside) ? beside : fileURLToPath(new URL('../dist/kit/arrivalReceiverProcess.js', import.meta.url));
}

/** Starts the arrival-counting HTTPS receiver (arrivalReceiverProcess.ts) as a child process and talks to it over IPC. */
export async function startReceiver(certificate: Certificate): Promise<Receiver> {
  const child: ChildProcess = fork(receiverScript(), [], {
    env: { PATH: process.env.PATH ?? '', RECEIVER_KEY_PATH: certificate.keyPath, RECEIVER_CERT_PATH: certificate.certPath },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ask = <T>(message: object | undefined, answer: string) =>
    new Promise<T>((resolve, reject) => {
      const onMessage = (reply: { type: string }) => {
        if (reply.type !== answer) return;
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve(reply as T);
      };
      const onExit = () => reject(new Error('the receiver exited'));
      child.on('message', onMessage);
      child.once('exit', onExit);
      if (message) child.send(message);
    });
  const { port } = await ask<{ port: number }>(undefined, 'listening');
  const stats = (channel?: string) => ask<ReceiverStats>({ type: 'stats', channel }, 'stats');
  return {
    url: `https://127.0.0.1:${port}`,
    pid: child.pid!,
    reset: () => ask({ type: 'reset' }, 'reset'),
    stats,
    async times(prefix) {
      const { entries } = await ask<{ entries: [string, number][] }>({ type: 'times', prefix }, 'times');
      return new Map(entries);
    },
    async waitForCount(count, timeoutMs, channel) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const current = await stats(channel);
        if (current.count >= count || Date.now() > deadline) return current;
        await sleep(20);
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
