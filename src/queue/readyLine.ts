import type { Job } from './jobQueue.js';

/**
 * The embedded queue's ready jobs in BullMQ's order: by priority (none before any, then 1, 2, …),
 * first in first out within one. A binary heap on (priority, arrival), so a burst of one account's
 * jobs costs each of them log n, and a job of another account still goes to the front at once.
 */
export function createReadyLine<Data>() {
  const heap: { job: Job<Data>; rank: number; seq: number }[] = [];
  let arrivals = 0;
  const before = (a: number, b: number) => heap[a]!.rank < heap[b]!.rank || (heap[a]!.rank === heap[b]!.rank && heap[a]!.seq < heap[b]!.seq);
  const swap = (a: number, b: number) => ([heap[a], heap[b]] = [heap[b]!, heap[a]!]);

  return {
    get size() {
      return heap.length;
    },
    push(job: Job<Data>) {
      heap.push({ job, rank: job.priority ?? 0, seq: arrivals++ });
      for (let i = heap.length - 1; i > 0 && before(i, (i - 1) >> 1); i = (i - 1) >> 1) swap(i, (i - 1) >> 1);
    },
    /** The job to run next, or undefined when none is ready. */
    shift(): Job<Data> | undefined {
      const first = heap[0];
      const last = heap.pop();
      if (first === undefined || last === undefined || heap.length === 0) return first?.job;
      heap[0] = last;
      for (let i = 0; ; ) {
        const left = 2 * i + 1;
        const right = left + 1;
        let next = i;
        if (left < heap.length && before(left, next)) next = left;
        if (right < heap.length && before(right, next)) next = right;
        if (next === i) return first.job;
        swap(i, next);
        i = next;
      }
    },
  };
}
