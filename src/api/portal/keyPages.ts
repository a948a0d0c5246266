import type { Services } from '../../services/index.js';
import type { PortalSession } from '../../services/portal.js';
import { counted, hostOf, html } from './html.js';
import { page } from './layout.js';

type KeyView = Awaited<ReturnType<Services['portal']['keyToRevoke']>>;
type Rotated = Awaited<ReturnType<Services['portal']['rotateKey']>>;
type HookView = Awaited<ReturnType<Services['hooks']['getForOwner']>>;

/** A confirmation: what the action does, said before it is done, with the button that does it and a way back. */
const confirmPage = (session: PortalSession, title: string, explanation: ReturnType<typeof html>, action: string, button: string) =>
  page(
    title,
    html`<h1>${title}</h1>
${explanation}
<form method="post" action="${action}" class="confirm">
  <input type="hidden" name="csrf" value="${session.csrfToken}">
  <button type="submit" class="danger">${button}</button>
  <a class="button" href="/portal">Cancel</a>
</form>`,
    { session },
  );

/** Revoking a key deletes its subscriptions: the page names them before the owner confirms. */
export function revokeConfirmPage(session: PortalSession, key: KeyView) {
  const name = key.name ?? key.source;
  return confirmPage(
    session,
    `Revoke the key ${name}?`,
    html`<p>Every request made with this key will be refused at once, and this cannot be undone.</p>
${
  key.hooks.length === 0
    ? html`<p>It has no subscriptions.</p>`
    : html`<p>Its ${counted(key.hooks.length, 'subscription')} will be deleted, and get no more events:</p>
<ul>${key.hooks.map((hook) => html`<li>${hook.event_type} → ${hostOf(hook.target_url)}</li>`)}</ul>`
}`,
    `/portal/keys/${key.id}/revoke`,
    `Revoke ${name} and delete its subscriptions`,
  );
}

/** Unsubscribing cannot be undone either: the integration would have to subscribe again. */
export function unsubscribeConfirmPage(session: PortalSession, hook: HookView) {
  const name = `${hook.event_type} → ${hostOf(hook.target_url)}`;
  return confirmPage(
    session,
    `Unsubscribe ${name}?`,
    html`<p>It will get no more events, and this cannot be undone: the integration would have to subscribe again.</p>`,
    `/portal/hooks/${hook.id}/unsubscribe`,
    `Unsubscribe ${name}`,
  );
}

/** A rotated key's new secret, shown this once. */
export function rotatedPage(session: PortalSession, rotated: Rotated) {
  const name = rotated.name ?? rotated.source;
  return page(
    `New secret for ${name}`,
    html`<h1>New secret for ${name}</h1>
<p>The old secret stopped working just now; the key’s subscriptions are kept. Give this one to the integration (for example,
reconnect the account in Zapier). It is shown only here: copy it before you leave this page.</p>
<p><label for="secret">New secret</label></p>
<input id="secret" class="secret" type="text" readonly value="${rotated.key}">
<p><a href="/portal">Back to keys and subscriptions</a></p>`,
    { session },
  );
}
