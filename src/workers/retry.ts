import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';

const FIRST_PAUSE_MS = 100;
const LONGEST_PAUSE_MS = 5_000;

/**
 * Runs `work` until it succeeds: for the steps of a delivery before its claim (and for recording
 * its outcome after), where giving up would drop an acknowledged event. A database or Redis blip
 * only delays the delivery. Stops, rethrowing the last error, once `signal` aborts (shutdown):
 * the relay then adds again what is left.
 */
export async function untilDone<T>(what: string, work: () => Promise<T>, signal: AbortSignal, log: Logger, context: object): Promise<T> {
  for (let pause = FIRST_PAUSE_MS; ; pause = Math.min(pause * 2, LONGEST_PAUSE_MS)) {
    try {
      return await work();
    } catch (error) {
      if (signal.aborted) throw error;
      log.warn({ err: error, ...context, retryInMs: pause }, `${what} failed; retrying`);
      await sleep(pause, undefined, { signal }).catch(() => {
        throw error;
      });
    }
  }
}
