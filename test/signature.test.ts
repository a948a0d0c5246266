import { describe, it, expect } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { newSigningSecret, signatureHeaders, verifySignature } from '../src/domain/signature.js';

describe('signature', () => {
  const body = JSON.stringify({ type: 'contact.created', data: { id: 'c_1', name: 'Zoë' } });

  it('generates whsec_ secrets of 24 random bytes', () => {
    const secret = newSigningSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(24);
    expect(newSigningSecret()).not.toBe(secret);
  });

  it('produces headers that standardwebhooks verifies', () => {
    const secret = newSigningSecret();
    const now = Math.floor(Date.now() / 1000);
    const headers = signatureHeaders(secret, 'msg_1', body, now);
    expect(headers['webhook-id']).toBe('msg_1');
    expect(headers['webhook-timestamp']).toBe(String(now));
    expect(headers['webhook-signature']).toMatch(/^v1,/);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it('fails verification for a tampered body, another secret or another id', () => {
    const secret = newSigningSecret();
    const headers = signatureHeaders(secret, 'msg_1', body, Math.floor(Date.now() / 1000));
    expect(() => new Webhook(secret).verify(body.replace('c_1', 'c_2'), headers)).toThrow();
    expect(() => new Webhook(newSigningSecret()).verify(body, headers)).toThrow();
    expect(() => new Webhook(secret).verify(body, { ...headers, 'webhook-id': 'msg_2' })).toThrow();
  });

  it('verifies what standardwebhooks signs, as `contact-hooks listen` does, and nothing else', () => {
    const secret = newSigningSecret();
    const now = Math.floor(Date.now() / 1000);
    const signed = new Webhook(secret).sign('msg_1', new Date(now * 1000), body);
    const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(now), 'webhook-signature': signed };
    expect(verifySignature(secret, headers, body, now)).toBe('verified');
    // Several signatures (a secret being rotated): one match is enough.
    expect(verifySignature(secret, { ...headers, 'webhook-signature': `v1,bm90IGl0 ${signed}` }, body, now)).toBe('verified');
    expect(verifySignature(secret, headers, body.replace('c_1', 'c_2'), now)).toBe('mismatch');
    expect(verifySignature(newSigningSecret(), headers, body, now)).toBe('mismatch');
    expect(verifySignature(secret, { ...headers, 'webhook-id': 'msg_2' }, body, now)).toBe('mismatch');
    expect(verifySignature(secret, headers, body, now + 301)).toBe('stale_timestamp');
    expect(verifySignature(secret, { ...headers, 'webhook-timestamp': 'soon' }, body, now)).toBe('stale_timestamp');
    expect(verifySignature(secret, { 'webhook-id': 'msg_1', 'webhook-timestamp': String(now) }, body, now)).toBe('missing_headers');
  });
});
