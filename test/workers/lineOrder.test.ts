import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createLine, type Admission, type Line, type LineStep } from '../../src/workers/line.js';
import { waitUntil } from '../support/processes.js';

type Data = { name: string; again?: boolean; key?: string };

const log = pino({ level: 'silent' });

/**
 * The line, in front of every process's delivery handler, hands out ready entries in one order:
 * by priority (none first, then 1, 2, …), first in first out within one; an entry that answers
 * "not yet" with a priority takes that place in line when its time comes. Fairness between
 * accounts rests on this (turns, src/domain/turns.ts). An entry waiting for room under a stuck
 * key (no room given back for a while) leaves the line, so that no job waits on hung POSTs.
 */
describe('the line', () => {
  let line: Line<Data, string> | undefined;
  afterEach(async () => {
    await line?.close();
  });

  const lineOf = (
    run: (data: Data) => Promise<LineStep<Data, string>>,
    options: { admission?: Admission<Data>; roomWaitMs?: number; concurrency?: number } = {},
  ) =>
    createLine<Data, string>(run, {
      concurrency: options.concurrency ?? 1,
      log,
      roomWaitMs: options.roomWaitMs ?? 60_000,
      admission: options.admission,
      leaveLine: async (data) => `left ${data.name}`,
      closedOutcome: (data) => `closed ${data.name}`,
    });

  /** A line whose one slot is held by a blocker until `release`, so entries added meanwhile line up. */
  async function lineBehindBlocker(run: (data: Data) => Promise<LineStep<Data, string>>) {
    const ran: string[] = [];
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    // One running slot, so the order entries run in is the order the line hands them out.
    line = lineOf(async (data) => {
      ran.push(data.name);
      if (data.name === 'blocker') {
        await released;
        return { done: 'blocker' };
      }
      return run(data);
    });
    void line.add({ id: 'blocker', data: { name: 'blocker' } });
    await waitUntil(() => ran.length === 1, 10_000);
    return { ran, release };
  }

  it('runs ready entries by priority, without one first, in arrival order within one, and resolves each with its outcome', async () => {
    const { ran, release } = await lineBehindBlocker(async (data) => ({ done: `did ${data.name}` }));
    const outcomes = [
      line!.add({ id: 'c', data: { name: 'c' }, priority: 3 }),
      line!.add({ id: 'a1', data: { name: 'a1' }, priority: 1 }),
      line!.add({ id: 'none', data: { name: 'none' } }),
      line!.add({ id: 'b', data: { name: 'b' }, priority: 2 }),
      line!.add({ id: 'a2', data: { name: 'a2' }, priority: 1 }),
    ];
    release();
    expect(await Promise.all(outcomes)).toStrictEqual(['did c', 'did a1', 'did none', 'did b', 'did a2']);
    expect(ran).toStrictEqual(['blocker', 'none', 'a1', 'a2', 'b', 'c']);
  });

  it('puts an entry that answered "not yet" with a priority in line at that priority when its time comes', async () => {
    const { ran, release } = await lineBehindBlocker(async (data) => {
      if (data.name === 'late' && !data.again) return { again: { runAt: Date.now() + 300, data: { name: 'late', again: true }, priority: 9 } };
      await sleep(300);
      return { done: data.name };
    });
    const late = line!.add({ id: 'late', data: { name: 'late' }, priority: 1 });
    for (const name of ['x1', 'x2', 'x3']) void line!.add({ id: name, data: { name }, priority: 5 });
    release();
    expect(await late).toBe('late');
    // `late` is ready again while x2 runs; at priority 1 still, it would run before x3.
    expect(ran).toStrictEqual(['blocker', 'late', 'x1', 'x2', 'x3', 'late']);
  });

  it('gives an entry added again while the line holds it the same outcome, run once', async () => {
    const { ran, release } = await lineBehindBlocker(async (data) => ({ done: `did ${data.name}` }));
    const first = line!.add({ id: 'twice', data: { name: 'twice' } });
    const second = line!.add({ id: 'twice', data: { name: 'twice' } });
    release();
    expect(await Promise.all([first, second])).toStrictEqual(['did twice', 'did twice']);
    expect(ran.filter((name) => name === 'twice')).toHaveLength(1);
  });

  it('sends an entry out of the line once its key gave no room back for roomWaitMs, and those that come while it is stuck at once', async () => {
    let held = 0;
    const admission: Admission<Data> = {
      needsRoom: () => true,
      keysOf: () => ['one'],
      take: () => (held === 0 ? ((held = 1), { release: () => void (held = 0) }) : { waitFor: 'one' }),
    };
    let releaseFirst!: () => void;
    line = lineOf(
      async (data) => {
        if (data.name === 'first') await new Promise<void>((resolve) => (releaseFirst = resolve));
        return { done: `did ${data.name}` };
      },
      { admission, roomWaitMs: 200, concurrency: 2 },
    );
    const first = line.add({ id: 'first', data: { name: 'first' } });
    const waiting = line.add({ id: 'waiting', data: { name: 'waiting' } });
    expect(await waiting).toBe('left waiting');
    // The key is stuck now: one that comes to wait under it leaves at once, holding no job.
    const addedAt = Date.now();
    expect(await line.add({ id: 'stuck too', data: { name: 'stuck too' } })).toBe('left stuck too');
    expect(Date.now() - addedAt).toBeLessThan(100);
    releaseFirst();
    expect(await first).toBe('did first');
    await sleep(10); // its room is given back once its handler has ended, a moment after its outcome
    expect(await line.add({ id: 'after', data: { name: 'after' } })).toBe('did after');
  });

  it('keeps an entry waiting for room as long as its key gives room back now and then, however long the wait', async () => {
    let held = 0;
    const admission: Admission<Data> = {
      needsRoom: () => true,
      keysOf: () => ['one'],
      take: () => (held === 0 ? ((held = 1), { release: () => void (held = 0) }) : { waitFor: 'one' }),
    };
    line = lineOf(
      async (data) => {
        await sleep(100);
        return { done: `did ${data.name}` };
      },
      { admission, roomWaitMs: 250, concurrency: 6 },
    );
    // Six at once through one unit of room, 100 ms each: the last waits 500 ms, twice roomWaitMs.
    const names = ['a', 'b', 'c', 'd', 'e', 'f'];
    expect(await Promise.all(names.map((name) => line!.add({ id: name, data: { name } })))).toStrictEqual(names.map((name) => `did ${name}`));
  });

  it('settles what it holds with the closed outcome when it closes, and lets the running entry finish', async () => {
    const { release } = await lineBehindBlocker(async (data) => ({ done: `did ${data.name}` }));
    const waitingForTime = line!.add({ id: 'timer', data: { name: 'timer' }, runAt: Date.now() + 60_000 });
    const ready = line!.add({ id: 'ready', data: { name: 'ready' } });
    const closing = line!.close();
    expect(await Promise.all([waitingForTime, ready])).toStrictEqual(['closed timer', 'closed ready']);
    release();
    await closing;
    expect(await line!.add({ id: 'late', data: { name: 'late' } })).toBe('closed late');
    line = undefined;
  });
});
