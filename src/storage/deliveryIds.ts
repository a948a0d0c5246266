/**
 * A delivery's id says where its row is. It is a UUIDv7 whose 48-bit time is its `queued_at`
 * to the millisecond (its event's creation time), so a statement given only ids can name the
 * day partitions they are in (src/storage/partitions.ts), and touches no other; new ids also
 * land at the right edge of the primary key's index instead of all over it.
 */

/**
 * SQL for a new delivery id whose time is `at` (a timestamptz expression): 12 hex digits of its
 * milliseconds, the version 7, then the rest of a random (version 4) UUID, variant bits and all.
 */
export const deliveryIdAt = (at: string) =>
  `(lpad(to_hex(floor(extract(epoch FROM ${at}) * 1000)::bigint), 12, '0') || '7' || substr(replace(gen_random_uuid()::text, '-', ''), 14))::uuid`;

/** The millisecond a UUIDv7 delivery id was queued at; undefined for ids made before migration 7 (random ones). */
export function queuedAtOfId(id: string): number | undefined {
  if (id[14] !== '7') return undefined;
  return Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
}

/**
 * The `queued_at` range, as two timestamptz parameters, that holds the rows of `ids`: from the
 * first's millisecond to just past the last's. Unbounded when an id is older than the scheme.
 */
export function queuedRange(ids: readonly string[]): [string, string] {
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  for (const id of ids) {
    const at = queuedAtOfId(id);
    if (at === undefined) return ['-infinity', 'infinity'];
    first = Math.min(first, at);
    last = Math.max(last, at);
  }
  if (ids.length === 0) return ['-infinity', 'infinity'];
  return [new Date(first).toISOString(), new Date(last + 1).toISOString()];
}
