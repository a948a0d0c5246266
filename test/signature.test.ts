import { describe, it, expect } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { newSigningSecret, signatureHeaders } from '../src/domain/signature.js';

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
});
