import { Pool } from 'undici';
import { seededPhone } from './seeding.js';

const json = { 'content-type': 'application/json' };

/** The service's HTTP API as the bench drives it: internal routes with the token, public ones with a key. */
export function serviceClient(baseUrl: string, token: string) {
  async function call(method: string, path: string, auth: string, body?: unknown) {
    const response = await fetch(baseUrl + path, {
      method,
      headers: { authorization: `Bearer ${auth}`, ...(body === undefined ? {} : json) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return JSON.parse(text) as Record<string, unknown>;
  }
  return {
    async newKey(accountId: string) {
      const created = await call('POST', `/internal/v1/accounts/${accountId}/keys`, token, { source: 'bench' });
      return created.key as string;
    },
    subscribe: (key: string, event: string, target: string, maxPerSecond?: number) =>
      call('POST', '/api/v1/hooks', key, { event, target_url: target, ...(maxPerSecond === undefined ? {} : { max_per_second: maxPerSecond }) }),
  };
}

export const callBody = (conversationId: string) =>
  JSON.stringify({
    conversation_id: conversationId,
    channel: 'voice',
    outcome: 'answered',
    spam: false,
    caller_name: 'Bench Caller',
    caller_number: '+14155550100',
    summary: 'Benchmark call: the caller asked about opening hours.',
  });

async function post(pool: Pool, path: string, auth: string, body: string, expected: number) {
  const response = await pool.request({ path, method: 'POST', headers: { authorization: `Bearer ${auth}`, ...json }, body });
  const text = await response.body.text();
  if (response.statusCode !== expected) throw new Error(`POST ${path}: ${response.statusCode} ${text}`);
  return text;
}

/** A completed call reported by the platform: one new_conversation event. */
export async function fireCall(pool: Pool, token: string, accountId: string, conversationId: string) {
  const text = await post(pool, `/internal/v1/accounts/${accountId}/calls`, token, callBody(conversationId), 202);
  if (!text.includes('new_conversation')) throw new Error(`call: no new_conversation in ${text}`);
}

/** A CRM sync of one contact; a new phone fires new_contact. */
export async function crmSync(pool: Pool, token: string, accountId: string, phone: string) {
  const text = await post(pool, `/internal/v1/accounts/${accountId}/contacts/sync`, token, JSON.stringify({ phone, source: 'crm' }), 200);
  if (!text.includes('"inserted"')) throw new Error(`sync: expected a new contact, got ${text}`);
}

/** A public upsert; `counts` tallies what it did. */
export async function upsertViaApi(pool: Pool, key: string, phone: string, counts?: { inserted: number; updated: number }) {
  const text = await post(pool, '/api/v1/contacts', key, JSON.stringify({ phone, name: `Bench ${phone.slice(-4)}` }), 200);
  if (!counts) return;
  if (text.includes('"inserted"')) counts.inserted++;
  else if (text.includes('"updated"')) counts.updated++;
  else throw new Error(`upsert: unexpected ${text}`);
}

/** `total` operations spread over `concurrency` lanes. */
export async function runCount(concurrency: number, total: number, operation: (index: number) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, total) }, async () => {
      while (next < total) await operation(next++);
    }),
  );
}

/** Phones for one run: new ones (+1 then 10 digits from 2000000000 on, never a seeded +1415 one), or a mix with seeded ones. */
export function phoneSource() {
  let issued = 0;
  const newPhone = () => `+1${2_000_000_000 + issued++}`;
  return {
    newPhone,
    /** ~50% existing (uniform over the seeded range), ~50% new. */
    mixedPhone: (seeded: number) => (Math.random() < 0.5 ? seededPhone(Math.floor(Math.random() * seeded)) : newPhone()),
  };
}

export type PhoneSource = ReturnType<typeof phoneSource>;
