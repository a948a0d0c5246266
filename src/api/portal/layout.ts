import type { PortalSession } from '../../services/portal.js';
import { html, time, type Html } from './html.js';

/** The messages a page shows after a write that redirected to it (`?done=`): fixed text, never the query's. */
const DONE: Record<string, string> = {
  enabled: 'The subscription is enabled: its events are delivered again.',
  unsubscribed: 'The subscription is removed: it gets no more events.',
  test_sent: 'A test event is on its way. It shows in the log below, marked test.',
  revoked: 'The key is revoked, and its subscriptions are deleted.',
};

export const doneMessage = (done: string | undefined) => (done !== undefined && Object.hasOwn(DONE, done) ? DONE[done] : undefined);

/**
 * A whole portal page: a skip link, the header with its navigation and the session's standing,
 * a status message when there is one, then the content. Styles and the time script are files
 * of the portal's own (the Content-Security-Policy allows nothing inline).
 */
export function page(title: string, content: Html, options: { session?: PortalSession | undefined; notice?: string | undefined } = {}) {
  const { session, notice } = options;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title} · Integrations</title>
<link rel="stylesheet" href="/portal/assets/portal.css">
<script src="/portal/assets/portal.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <p class="brand">Integrations</p>
  ${
    session &&
    html`<nav aria-label="Portal">
    <ul>
      <li><a href="/portal">Keys and subscriptions</a></li>
      <li><a href="/portal/events">Event catalog</a></li>
    </ul>
  </nav>
  <p class="standing">${session.capabilities.includes('manage') ? 'You can view and manage' : 'View only'} · until ${time(session.expiresAt)}</p>`
  }
</header>
<main id="main" tabindex="-1">
${notice && html`<p class="notice" role="status">${notice}</p>`}
${content}
</main>
</body>
</html>`;
}

/** A form that POSTs one action with the session's CSRF token: a button, nothing else to fill in. */
export const actionForm = (session: PortalSession, action: string, label: string, style: 'primary' | 'danger' | 'plain' = 'plain') =>
  html`<form method="post" action="${action}" class="inline"><input type="hidden" name="csrf" value="${session.csrfToken}"><button type="submit" class="${style}">${label}</button></form>`;

/** Whether this session may write: read-only sessions are shown no controls at all. */
export const canManage = (session: PortalSession) => session.capabilities.includes('manage');
