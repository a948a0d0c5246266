/**
 * Group commit: concurrent writes of one kind (claims, outcomes, calls, upserts) share one
 * statement and one commit. A write is submitted and awaited as if it were alone; those
 * submitted while a batch is being written form the next batch. So an idle engine writes each
 * at once, and a busy one writes as many per commit as arrived during the last one, with no
 * timer to tune. Each caller learns its own result only after its batch committed: nothing is
 * acknowledged before it is durable.
 */
export function groupCommit<Item, Result>(write: (items: Item[]) => Promise<Result[]>, maxBatch = 500) {
  let pending: { item: Item; resolve: (result: Result) => void; reject: (error: unknown) => void }[] = [];
  let writing: Promise<void> | undefined;

  async function drain() {
    // One turn of the event loop first, so that submissions made together share the first batch.
    await new Promise((resolve) => setImmediate(resolve));
    while (pending.length > 0) {
      const batch = pending.slice(0, maxBatch);
      pending = pending.slice(batch.length);
      try {
        const results = await write(batch.map((entry) => entry.item));
        batch.forEach((entry, i) => entry.resolve(results[i]!));
      } catch (error) {
        for (const entry of batch) entry.reject(error);
      }
    }
  }

  // A submission made after the last batch was taken, but before the drain ended, starts the next.
  const start = () => {
    writing ??= drain().finally(() => {
      writing = undefined;
      if (pending.length > 0) start();
    });
  };

  return {
    submit(item: Item): Promise<Result> {
      const result = new Promise<Result>((resolve, reject) => pending.push({ item, resolve, reject }));
      start();
      return result;
    },
    /** Resolves once everything submitted so far is written (or failed to its caller). */
    async settled() {
      while (writing) await writing;
    },
  };
}

export type GroupCommit<Item, Result> = ReturnType<typeof groupCommit<Item, Result>>;
