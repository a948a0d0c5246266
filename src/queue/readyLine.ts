/**
 * Items in order: by rank (lower first), first in first out within one: the in-process queue's
 * waiting jobs and the delivery line's ready entries. A binary heap on (rank, arrival), so a
 * burst of one account's items costs each of them log n, and another account's still goes to
 * the front at once.
 */
export function createReadyLine<Item>() {
  const heap: { item: Item; rank: number; seq: number }[] = [];
  let arrivals = 0;
  const before = (a: number, b: number) => heap[a]!.rank < heap[b]!.rank || (heap[a]!.rank === heap[b]!.rank && heap[a]!.seq < heap[b]!.seq);
  const swap = (a: number, b: number) => ([heap[a], heap[b]] = [heap[b]!, heap[a]!]);

  return {
    get size() {
      return heap.length;
    },
    push(item: Item, rank: number) {
      heap.push({ item, rank, seq: arrivals++ });
      for (let i = heap.length - 1; i > 0 && before(i, (i - 1) >> 1); i = (i - 1) >> 1) swap(i, (i - 1) >> 1);
    },
    /** Drops every item. */
    clear() {
      heap.length = 0;
    },
    /** The item to run next, or undefined when none is ready. */
    shift(): Item | undefined {
      const first = heap[0];
      const last = heap.pop();
      if (first === undefined || last === undefined || heap.length === 0) return first?.item;
      heap[0] = last;
      for (let i = 0; ;) {
        const left = 2 * i + 1;
        const right = left + 1;
        let next = i;
        if (left < heap.length && before(left, next)) next = left;
        if (right < heap.length && before(right, next)) next = right;
        if (next === i) return first.item;
        swap(i, next);
        i = next;
      }
    },
  };
}
