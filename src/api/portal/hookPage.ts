import { DELIVERY_STATUSES } from '../../domain/delivery.js';
import { EVENT_TYPES } from '../../domain/events.js';
import type { Services } from '../../services/index.js';
import type { PortalSession } from '../../services/portal.js';
import { hookCharts } from './chart.js';
import { counted, hostOf, html, time } from './html.js';
import { actionForm, canManage, page } from './layout.js';

type HookView = Awaited<ReturnType<Services['portal']['hook']>>;

/** The time ranges the log filter offers, as look-backs from now; `all` is the whole log. */
export const LOG_RANGES = { '1h': 3_600_000, '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 } as const;
const RANGE_LABELS: Record<string, string> = { all: 'All kept', '1h': 'Last hour', '24h': 'Last 24 hours', '7d': 'Last 7 days', '30d': 'Last 30 days' };

/** The filters a log page was asked with, kept in its link to the next page. */
export interface LogFilters {
  status?: string | undefined;
  event?: string | undefined;
  range?: string | undefined;
  limit?: string | undefined;
}

const option = (value: string, label: string, selected: string | undefined) =>
  html`<option value="${value}"${value === (selected ?? '') ? html` selected` : ''}>${label}</option>`;

/** The filter form: a GET form, so a filtered log is a link like any other. */
const filterForm = (
  hookId: string,
  filters: LogFilters,
) => html`<form method="get" action="/portal/hooks/${hookId}" class="filters" aria-label="Filter the deliveries">
  <div><label for="status">Status</label>
    <select id="status" name="status">${option('', 'Any', filters.status)}${DELIVERY_STATUSES.map((status) => option(status, status, filters.status))}</select></div>
  <div><label for="event">Event type</label>
    <select id="event" name="event">${option('', 'Any', filters.event)}${EVENT_TYPES.map((type) => option(type, type, filters.event))}</select></div>
  <div><label for="range">Time</label>
    <select id="range" name="range">${Object.entries(RANGE_LABELS).map(([value, label]) => option(value === 'all' ? '' : value, label, filters.range))}</select></div>
  <div><button type="submit">Filter</button></div>
</form>`;

const outcome = (delivery: HookView['log']['deliveries'][number]) =>
  [delivery.response_status !== null && `HTTP ${delivery.response_status}`, delivery.error].filter(Boolean).join(', ') || '—';

const logTable = (view: HookView, filters: LogFilters) => {
  const { deliveries, next_cursor } = view.log;
  if (deliveries.length === 0) return html`<p>No deliveries match.</p>`;
  const kept = Object.entries(filters).filter((entry): entry is [string, string] => Boolean(entry[1]));
  const query = (extra: Record<string, string>) => new URLSearchParams([...kept, ...Object.entries(extra)]).toString();
  return html`<div class="scroll" role="region" aria-labelledby="log-caption" tabindex="0">
<table class="log">
  <caption id="log-caption">Deliveries, newest first</caption>
  <thead><tr><th scope="col">Status</th><th scope="col">Queued</th><th scope="col">Answer</th><th scope="col">Duration</th><th scope="col">Details</th></tr></thead>
  <tbody>
  ${deliveries.map(
    (delivery) => html`<tr>
    <td><span class="status status-${delivery.status}">${delivery.status}</span>${delivery.test && html` <span class="badge">test</span>`}</td>
    <td>${time(delivery.queued_at)}</td>
    <td>${outcome(delivery)}</td>
    <td>${delivery.duration_ms === null ? '—' : `${delivery.duration_ms} ms`}</td>
    <td><a href="/portal/deliveries/${delivery.id}">Delivery ${delivery.id.slice(-8)}</a></td>
  </tr>`,
  )}
  </tbody>
</table>
</div>
${next_cursor && html`<p class="paging"><a href="/portal/hooks/${view.hook.id}?${query({ cursor: next_cursor })}">Older deliveries</a></p>`}`;
};

/** A hook: what it is, its state, its charts, and its log, filtered and paged. */
export function hookPage(session: PortalSession, view: HookView, filters: LogFilters, notice: string | undefined) {
  const { hook } = view;
  const name = `${hook.event_type} → ${hostOf(hook.target_url)}`;
  return page(
    name,
    html`<p class="crumbs"><a href="/portal">Keys and subscriptions</a></p>
<h1>${name}</h1>
<dl class="meta">
  <div><dt>Target URL</dt><dd class="wrap">${hook.target_url}</dd></div>
  <div><dt>State</dt><dd>${hook.state}${hook.state === 'disabled' && html`, since ${time(hook.disabled_at)}, because every delivery failed (${hook.health.consecutive_failures} in a row); ${counted(hook.health.skipped, 'event')} not sent since`}</dd></div>
  <div><dt>Created</dt><dd>${time(hook.created_at)}</dd></div>
  <div><dt>Last delivered</dt><dd>${time(hook.health.last_delivered_at, 'never')}</dd></div>
  <div><dt>Last failed</dt><dd>${time(hook.health.last_failed_at, 'never')}</dd></div>
</dl>
${
  canManage(session) &&
  html`<div class="actions">
  ${hook.state === 'disabled' && actionForm(session, `/portal/hooks/${hook.id}/enable`, 'Enable', 'primary')}
  ${actionForm(session, `/portal/hooks/${hook.id}/test`, 'Send a test event')}
  <a class="button danger" href="/portal/hooks/${hook.id}/unsubscribe">Unsubscribe…</a>
</div>`
}
<h2>Outcomes</h2>
${hookCharts(view.charts)}
<h2>Deliveries</h2>
${filterForm(hook.id, filters)}
${logTable(view, filters)}`,
    { session, notice },
  );
}
