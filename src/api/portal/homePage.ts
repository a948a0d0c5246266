import type { Services } from '../../services/index.js';
import type { PortalSession } from '../../services/portal.js';
import { counted, hostOf, html, time } from './html.js';
import { actionForm, canManage, page } from './layout.js';

type Home = Awaited<ReturnType<Services['portal']['home']>>;
type Key = Home['keys'][number];
type Hook = Key['hooks'][number];

/** The state in words: disabled says why, and how many events it missed since. */
const state = (hook: Hook) =>
  hook.state === 'active'
    ? html`<span class="badge ok">active</span>`
    : html`<span class="badge bad">disabled</span> since ${time(hook.disabled_at)}, because every delivery failed
      (${hook.health.consecutive_failures} in a row). ${counted(hook.health.skipped, 'event')} not sent since.`;

const last24h = (hook: Hook) => {
  const counts = Object.entries(hook.health.last_24h).filter(([, count]) => count > 0);
  return counts.length === 0 ? 'none' : counts.map(([status, count]) => `${count} ${status}`).join(', ');
};

const hookCard = (session: PortalSession, hook: Hook) => html`<li class="card">
  <h3><a href="/portal/hooks/${hook.id}">${hook.event_type} → ${hostOf(hook.target_url)}</a></h3>
  <dl>
    <div><dt>Target URL</dt><dd class="wrap">${hook.target_url}</dd></div>
    <div><dt>State</dt><dd>${state(hook)}</dd></div>
    <div><dt>Last 24 hours</dt><dd>${last24h(hook)}</dd></div>
    <div><dt>Last delivered</dt><dd>${time(hook.health.last_delivered_at, 'never')}</dd></div>
    <div><dt>Last failed</dt><dd>${time(hook.health.last_failed_at, 'never')}</dd></div>
  </dl>
  ${
    canManage(session) &&
    html`<div class="actions">
    ${hook.state === 'disabled' && actionForm(session, `/portal/hooks/${hook.id}/enable`, `Enable ${hook.event_type} → ${hostOf(hook.target_url)}`, 'primary')}
    ${actionForm(session, `/portal/hooks/${hook.id}/test`, `Send a test event to ${hostOf(hook.target_url)}`)}
    <a class="button danger" href="/portal/hooks/${hook.id}/unsubscribe">Unsubscribe…</a>
  </div>`
  }
</li>`;

const keyName = (key: Key) => key.name ?? key.source;

const keySection = (session: PortalSession, key: Key) => html`<section class="key" aria-labelledby="key-${key.id}">
  <h2 id="key-${key.id}">${keyName(key)} ${key.revoked_at && html`<span class="badge bad">revoked</span>`}</h2>
  <dl class="meta">
    <div><dt>Source</dt><dd>${key.source}</dd></div>
    <div><dt>Created</dt><dd>${time(key.created_at)}</dd></div>
    <div><dt>Last used</dt><dd>${time(key.last_used_at, 'never')}</dd></div>
    ${key.revoked_at && html`<div><dt>Revoked</dt><dd>${time(key.revoked_at)}</dd></div>`}
  </dl>
  ${
    canManage(session) &&
    !key.revoked_at &&
    html`<div class="actions">
    ${actionForm(session, `/portal/keys/${key.id}/rotate`, `Rotate the secret of ${keyName(key)}`)}
    <a class="button danger" href="/portal/keys/${key.id}/revoke">Revoke ${keyName(key)}…</a>
  </div>`
  }
  ${
    key.hooks.length === 0
      ? html`<p>No subscriptions.</p>`
      : html`<ul class="cards" aria-label="Subscriptions of ${keyName(key)}">${key.hooks.map((hook) => hookCard(session, hook))}</ul>`
  }
</section>`;

/** Home: every key of the account, each with its subscriptions and their health. */
export const homePage = (session: PortalSession, home: Home, notice: string | undefined) =>
  page(
    'Keys and subscriptions',
    html`<h1>Keys and subscriptions</h1>
${home.keys.length === 0 ? html`<p>This account has no API keys yet.</p>` : home.keys.map((key) => keySection(session, key))}`,
    { session, notice },
  );
