import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createLocalQueue, type LocalJobResult, type LocalQueue } from '../../src/queue/localQueue.js';
import { waitUntil } from '../support/processes.js';

type Data = { name: string; again?: boolean };

const log = pino({ level: 'silent' });

/**
 * The local queue, in front of every process's delivery handler, hands out ready jobs in one
 * order: by priority (none first, then 1, 2, …), first in first out within one; a job that
 * answers "not yet" with a priority takes that place in line when its time comes. Fairness
 * between accounts rests on this (turns, src/domain/pacing.ts).
 */
describe('the order jobs run in, local queue', () => {
  let queue: LocalQueue<Data> | undefined;
  afterEach(async () => {
    await queue?.close();
  });

  /** A queue whose one slot is held by a blocker until `release`, so jobs added meanwhile line up. */
  async function queueBehindBlocker(run: (data: Data) => Promise<LocalJobResult<Data>>) {
    const ran: string[] = [];
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    // One running slot, so the order jobs run in is the order the queue hands them out.
    queue = createLocalQueue<Data>(
      async (data) => {
        ran.push(data.name);
        if (data.name === 'blocker') return void (await released);
        return run(data);
      },
      { capacity: 100, concurrency: 1, log, name: 'deliveries' },
    );
    queue.add([{ id: 'blocker', data: { name: 'blocker' } }]);
    await waitUntil(() => ran.length === 1, 10_000);
    return { ran, release };
  }

  it('runs ready jobs by priority, without one first, in arrival order within one', async () => {
    const { ran, release } = await queueBehindBlocker(async () => undefined);
    queue!.add([
      { id: 'c', data: { name: 'c' }, priority: 3 },
      { id: 'a1', data: { name: 'a1' }, priority: 1 },
      { id: 'none', data: { name: 'none' } },
      { id: 'b', data: { name: 'b' }, priority: 2 },
      { id: 'a2', data: { name: 'a2' }, priority: 1 },
    ]);
    release();
    await waitUntil(() => ran.length === 6, 10_000);
    expect(ran).toStrictEqual(['blocker', 'none', 'a1', 'a2', 'b', 'c']);
  });

  it('puts a job that answered "not yet" with a priority in line at that priority when its time comes', async () => {
    const { ran, release } = await queueBehindBlocker(async (data) => {
      if (data.name === 'late' && !data.again) return { runAt: Date.now() + 300, data: { name: 'late', again: true }, priority: 9 };
      await sleep(300);
      return undefined;
    });
    queue!.add([
      { id: 'late', data: { name: 'late' }, priority: 1 },
      ...['x1', 'x2', 'x3'].map((name) => ({ id: name, data: { name }, priority: 5 })),
    ]);
    release();
    await waitUntil(() => ran.length === 6, 10_000);
    // `late` is ready again while x2 runs; at priority 1 still, it would run before x3.
    expect(ran).toStrictEqual(['blocker', 'late', 'x1', 'x2', 'x3', 'late']);
  });
});
