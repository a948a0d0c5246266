import type { Logger } from 'pino';
import { createReadyLine } from '../queue/readyLine.js';

export interface LineEntry<Data> {
  /** Unique per unit of work (a delivery id): adding an id the line holds gives that entry's outcome. */
  id: string;
  data: Data;
  /** Epoch ms before which the entry does not run; one waiting for its time holds no running slot. */
  runAt?: number;
  /** Among entries ready at once, a lower number runs first; FIFO within one (none before any). */
  priority?: number;
}

/**
 * What a handler answers: run it again at `runAt` (with `data`, at `priority` when given, else
 * its own), or it is done, with its outcome (which may still be on its way: a POST's outcome
 * is known once recorded, after its running slot is free for the next entry).
 */
export type LineStep<Data, Outcome> = { again: { runAt: number; data: Data; priority?: number } } | { done: Outcome | Promise<Outcome> };

/**
 * `signal` aborts when the line closes, so a handler waiting out an outage can stop.
 * `release` gives the entry's admitted room back early (it is given back when the handler ends anyway).
 */
export type LineHandler<Data, Outcome> = (data: Data, signal: AbortSignal, release: () => void) => Promise<LineStep<Data, Outcome>>;

/**
 * Room an entry needs beyond a running slot (the delivery engine's in-flight caps). An entry
 * without room waits for the key that had none, in line there by priority, holding nothing; each
 * unit of room given back under a key lets the best entry waiting for that key try again.
 */
export interface Admission<Data> {
  /** Whether the entry needs room to run now; one that does not runs as soon as a slot is free. */
  needsRoom(data: Data): boolean;
  take(data: Data): { release: () => void } | { waitFor: string };
  /** The keys whose room an entry's release gives back. */
  keysOf(data: Data): string[];
}

export interface LineOptions<Data, Outcome> {
  concurrency: number;
  admission?: Admission<Data>;
  /**
   * An entry waiting for room under a key that gave none back for this long (a target or account
   * whose POSTs hang) leaves the line, to `leaveLine`, and so does one that comes to wait under a
   * key stuck so: the jobs waiting on them are free. Under a key whose room comes and goes (a
   * burst larger than its cap), it waits on.
   */
  roomWaitMs: number;
  /** Where an entry goes that waited too long for room, and its outcome then. */
  leaveLine(data: Data): Promise<Outcome>;
  /** The outcome of an entry the line held when it closed, not run: its work is left to the relay. */
  closedOutcome(data: Data): Outcome;
  log: Logger;
}

interface Held<Data, Outcome> extends LineEntry<Data> {
  outcome: Promise<Outcome>;
  settle(outcome: Outcome | Promise<Outcome>): void;
  fail(error: unknown): void;
  /** Set once it left the line for waiting too long for room: the line it waited in skips it. */
  gone?: boolean;
  roomTimer?: NodeJS.Timeout;
  /** Its handler runs now: it settles itself when that ends. */
  running?: boolean;
}

/**
 * The delivery engine's line in each process that delivers: entries run `concurrency` at once, by
 * priority then arrival, each once it has the room `admission` asks for; an entry waiting for its
 * time waits on a timer, and one waiting for room waits in line for it, holding no running slot,
 * for `roomWaitMs` at most. `add` resolves with the entry's outcome. Nothing here survives the
 * process: what it held is in the database, and the relay brings it back.
 */
export function createLine<Data, Outcome>(handler: LineHandler<Data, Outcome>, options: LineOptions<Data, Outcome>) {
  const ready = createReadyLine<Held<Data, Outcome>>();
  const waitingForRoom = new Map<string, ReturnType<typeof createReadyLine<Held<Data, Outcome>>>>();
  const held = new Map<string, Held<Data, Outcome>>(); // ready, waiting for their time or room, or running
  const timers = new Map<string, NodeJS.Timeout>();
  const running = new Set<Promise<void>>();
  let roomWaiting = 0;
  const closing = new AbortController();

  const finish = (entry: Held<Data, Outcome>, outcome: Outcome | Promise<Outcome>) => {
    held.delete(entry.id);
    entry.settle(outcome);
  };

  /**
   * When each key with entries waiting for its room last moved: when their wait began, or when it
   * last gave room back. One that has not moved for roomWaitMs is stuck.
   */
  const movedAt = new Map<string, number>();
  const isStuck = (key: string) => Date.now() - (movedAt.get(key) ?? Date.now()) >= options.roomWaitMs;

  /** The entry leaves the line: its key is stuck. */
  const leave = (entry: Held<Data, Outcome>) => finish(entry, options.leaveLine(entry.data));

  /** After roomWaitMs: the entry leaves the line if its key is stuck, else waits on. */
  const watchRoomWait = (entry: Held<Data, Outcome>, key: string) => {
    entry.roomTimer = setTimeout(
      () => {
        if (!isStuck(key)) return watchRoomWait(entry, key);
        entry.gone = true;
        roomWaiting--;
        leave(entry);
      },
      Math.max(1, (movedAt.get(key) ?? Date.now()) + options.roomWaitMs - Date.now()),
    );
  };

  /**
   * Takes the entry's room (with the keys it is taken under), none when it needs none, or puts it
   * in line for the key that has none (watchRoomWait); under a key already stuck it leaves at once.
   */
  const admit = (entry: Held<Data, Outcome>): { release: () => void; keys: string[] } | undefined => {
    if (!options.admission?.needsRoom(entry.data)) return { release: () => {}, keys: [] };
    const taken = options.admission.take(entry.data);
    if ('release' in taken) return { release: taken.release, keys: options.admission.keysOf(entry.data) };
    const key = taken.waitFor;
    if (isStuck(key)) {
      leave(entry);
      return undefined;
    }
    let line = waitingForRoom.get(key);
    if (!line) {
      waitingForRoom.set(key, (line = createReadyLine<Held<Data, Outcome>>()));
      movedAt.set(key, Date.now());
    }
    line.push(entry, entry.priority ?? 0);
    roomWaiting++;
    watchRoomWait(entry, key);
    return undefined;
  };

  /** The best entry waiting for room under `key` that is still there. */
  const nextWaiting = (key: string) => {
    const line = waitingForRoom.get(key);
    let next = line?.shift();
    while (next?.gone) next = line?.shift();
    if (line && line.size === 0) {
      waitingForRoom.delete(key);
      movedAt.delete(key);
    }
    if (next) {
      clearTimeout(next.roomTimer);
      roomWaiting--;
    }
    return next;
  };

  /** Gives room back, once, and lets the best entry waiting under each of its keys try again. */
  const releaser = ({ release, keys }: { release: () => void; keys: string[] }) => {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      release();
      const now = Date.now();
      for (const key of keys) {
        if (waitingForRoom.has(key)) movedAt.set(key, now);
        const next = nextWaiting(key);
        if (next) ready.push(next, next.priority ?? 0);
      }
      pump();
    };
  };

  function pump() {
    while (!closing.signal.aborted && running.size < options.concurrency) {
      const entry = ready.shift();
      if (entry === undefined) return;
      const admitted = admit(entry);
      if (!admitted) continue;
      const release = releaser(admitted);
      entry.running = true;
      const run: Promise<void> = handler(entry.data, closing.signal, release)
        .then(
          (step) => {
            if ('done' in step) finish(entry, step.done);
            else if (closing.signal.aborted) finish(entry, options.closedOutcome(step.again.data));
            else schedule(Object.assign(entry, step.again, { priority: step.again.priority ?? entry.priority }));
          },
          (error: unknown) => {
            held.delete(entry.id);
            entry.fail(error);
          },
        )
        .finally(() => {
          entry.running = false;
          running.delete(run);
          release();
          pump();
        });
      running.add(run);
    }
  }

  function schedule(entry: Held<Data, Outcome>) {
    const delay = (entry.runAt ?? 0) - Date.now();
    if (delay <= 0) {
      ready.push(entry, entry.priority ?? 0);
      return pump();
    }
    timers.set(
      entry.id,
      setTimeout(() => {
        timers.delete(entry.id);
        ready.push(entry, entry.priority ?? 0);
        pump();
      }, delay),
    );
  }

  return {
    /** Takes the entry, and resolves with its outcome; once closing, its outcome is closedOutcome at once. */
    add(entry: LineEntry<Data>): Promise<Outcome> {
      const holding = held.get(entry.id);
      if (holding) return holding.outcome;
      if (closing.signal.aborted) return Promise.resolve(options.closedOutcome(entry.data));
      let settle!: Held<Data, Outcome>['settle'];
      let fail!: Held<Data, Outcome>['fail'];
      const outcome = new Promise<Outcome>((resolve, reject) => ((settle = resolve), (fail = reject)));
      const taken: Held<Data, Outcome> = { ...entry, outcome, settle, fail };
      held.set(entry.id, taken);
      schedule(taken);
      return outcome;
    },
    /** Entries ready or running, waiting for their time, and waiting for room. */
    counts: () => ({ ready: held.size - timers.size - roomWaiting, waiting: timers.size, blocked: roomWaiting }),
    /** Takes no new entries, settles those not running with closedOutcome, and waits for the running ones. */
    async close() {
      closing.abort();
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
      for (const entry of [...held.values()]) {
        clearTimeout(entry.roomTimer);
        if (!entry.running) finish(entry, options.closedOutcome(entry.data));
      }
      waitingForRoom.clear();
      movedAt.clear();
      await Promise.all(running);
    },
  };
}

export type Line<Data, Outcome> = ReturnType<typeof createLine<Data, Outcome>>;
