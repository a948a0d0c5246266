import { FAILURE_STATUSES, SUCCESS_STATUS, type HookDisableRule } from '../domain/hookHealth.js';

/**
 * The SQL that keeps hook health current, as common table expressions that follow a CTE named
 * `done (hook_id, status, attempted_at)`: the deliveries whose outcome the same statement
 * records. So health costs no statement and no commit of its own, and an outcome recorded twice
 * (a retried write whose first answer was lost) changes `done`, and health, once.
 */

/** The start of the current hour: last_24h sums the latest 24 of these buckets. */
const HOUR = `to_timestamp(floor(extract(epoch FROM statement_timestamp()) / 3600) * 3600)`;

/** Counts the outcomes in `done` per hook, hour and status, for last_24h. Locks in one order, so concurrent writers wait rather than deadlock. */
export const COUNT_OUTCOMES = `
  counted AS (
    INSERT INTO hook_outcome_hours AS c (hook_id, hour, status, count)
    SELECT hook_id, ${HOUR}, status, count(*) FROM done GROUP BY hook_id, status ORDER BY hook_id, status
    ON CONFLICT (hook_id, hour, status) DO UPDATE SET count = c.count + excluded.count)`;

const FAILURE = `status IN (${FAILURE_STATUSES.map((status) => `'${status}'`).join(', ')})`;

// In the UPDATE below, `h` is the hook as it stands (re-read after its row lock), `s` this batch.
// A success in the batch ends the streak: only the failures after it count, and start it again.
const FAILURES = `CASE WHEN s.delivered_at IS NULL THEN h.consecutive_failures + s.failures ELSE s.failures END`;
const SINCE = `CASE WHEN s.delivered_at IS NULL THEN coalesce(h.failing_since, s.since) ELSE s.since END`;

/**
 * Updates the health of the hooks in `done` and disables those the rule says to (`$afterMs`, in
 * ms, and `$minFailures` name the statement's parameters). Ends with CTE `health`, the hooks
 * updated; those this statement disabled have `disabled_at = statement_timestamp()`.
 */
export function updateHealth(params: { afterMs: string; minFailures: string }) {
  const disable =
    `h.state = 'active' AND h.deleted_at IS NULL AND s.failures > 0 AND ${FAILURES} >= ${params.minFailures}` +
    ` AND s.failed_at - ${SINCE} >= make_interval(secs => ${params.afterMs} / 1000.0)`;
  return `
  ${COUNT_OUTCOMES},
  ended AS (
    SELECT hook_id, coalesce(max(attempted_at) FILTER (WHERE status = '${SUCCESS_STATUS}'), '-infinity') AS at FROM done GROUP BY hook_id),
  streaks AS (
    SELECT d.hook_id,
      max(d.attempted_at) FILTER (WHERE d.status = '${SUCCESS_STATUS}') AS delivered_at,
      max(d.attempted_at) FILTER (WHERE d.${FAILURE}) AS failed_at,
      count(*) FILTER (WHERE d.${FAILURE} AND d.attempted_at > e.at) AS failures,
      min(d.attempted_at) FILTER (WHERE d.${FAILURE} AND d.attempted_at > e.at) AS since
    FROM done d JOIN ended e ON e.hook_id = d.hook_id GROUP BY d.hook_id),
  locked AS (SELECT id FROM hooks WHERE id IN (SELECT hook_id FROM streaks) ORDER BY id FOR NO KEY UPDATE),
  health AS (
    UPDATE hooks h SET
      last_delivered_at = greatest(h.last_delivered_at, s.delivered_at),
      last_failed_at = greatest(h.last_failed_at, s.failed_at),
      consecutive_failures = ${FAILURES},
      failing_since = ${SINCE},
      state = CASE WHEN ${disable} THEN 'disabled' ELSE h.state END,
      disabled_reason = CASE WHEN ${disable} THEN 'failing' ELSE h.disabled_reason END,
      disabled_at = CASE WHEN ${disable} THEN statement_timestamp() ELSE h.disabled_at END,
      skipped = CASE WHEN ${disable} THEN 0 ELSE h.skipped END
    FROM streaks s, locked l WHERE h.id = s.hook_id AND l.id = s.hook_id
    RETURNING h.id, h.account_id, h.state, h.disabled_at, h.consecutive_failures, h.failing_since)`;
}

/** A hook the statement disabled: what its warning says. */
export interface DisabledHook {
  id: string;
  account_id: string;
  consecutive_failures: number;
  failing_since: Date;
}

/** Selects from `health` the hooks this statement disabled. */
export const JUST_DISABLED = `SELECT id, account_id, consecutive_failures, failing_since FROM health
  WHERE state = 'disabled' AND disabled_at = statement_timestamp()`;

/** The rule as the statement's parameters, in the order updateHealth names them. */
export const ruleParams = (rule: HookDisableRule) => [rule.afterMs, rule.minFailures];
