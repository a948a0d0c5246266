import { describe, expect, it } from 'vitest';
import { API_KEY_PREFIX, apiKeyFromHeader, hashApiKey, newApiKey, SOURCE_SHAPE } from '../../src/domain/apiKey.js';

const key = `chk_${'a'.repeat(20)}-_${'Z9'.repeat(10)}${'b'.repeat(1)}`;

describe('newApiKey', () => {
  it('starts with the fixed prefix and is read back from a Bearer header', () => {
    const issued = newApiKey();
    expect(issued.startsWith(API_KEY_PREFIX)).toBe(true);
    expect(API_KEY_PREFIX).toBe('chk_');
    expect(apiKeyFromHeader(`Bearer ${issued}`)).toBe(issued);
  });

  it('is different every time', () => {
    expect(new Set(Array.from({ length: 50 }, newApiKey)).size).toBe(50);
  });
});

describe('hashApiKey', () => {
  it('is a stable SHA-256 hex digest that does not contain the key', () => {
    const hash = hashApiKey(key);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hashApiKey(key)).toBe(hash);
    expect(hashApiKey(`${key.slice(0, -1)}c`)).not.toBe(hash);
    expect(hash).not.toContain(key.slice(4));
  });
});

describe('apiKeyFromHeader', () => {
  it('the test key is well formed', () => {
    expect(key).toHaveLength(47);
  });

  it.each([`Bearer ${key}`, `bearer ${key}`, `BEARER ${key}`, `  Bearer ${key}  `])('reads the key from %j', (header) => {
    expect(apiKeyFromHeader(header)).toBe(key);
  });

  it.each([
    ['no header', undefined],
    ['empty', ''],
    ['scheme only', 'Bearer'],
    ['scheme and space', 'Bearer '],
    ['no scheme', key],
    ['Basic scheme', `Basic ${key}`],
    ['Token scheme', `Token ${key}`],
    ['two spaces', `Bearer  ${key}`],
    ['extra token', `Bearer ${key} extra`],
    ['wrong prefix', `Bearer sk_${'a'.repeat(44)}`],
    ['no prefix', `Bearer ${'a'.repeat(47)}`],
    ['too short', `Bearer ${key.slice(0, -1)}`],
    ['too long', `Bearer ${key}a`],
    ['characters outside base64url', `Bearer chk_${'a'.repeat(42)}+`],
    ['uppercase prefix', `Bearer CHK_${'a'.repeat(43)}`],
  ])('refuses %s', (_why, header) => {
    expect(apiKeyFromHeader(header)).toBeUndefined();
  });
});

describe('SOURCE_SHAPE', () => {
  it.each(['api', 'zapier', 'make', 'hubspot', 'n8n', 'salesforce.v2', 'a'])('accepts %j', (source) => {
    expect(SOURCE_SHAPE.test(source)).toBe(true);
  });

  it.each(['', 'Zapier', 'has space', '-leading', 'a'.repeat(65), 'zap/ier'])('refuses %j', (source) => {
    expect(SOURCE_SHAPE.test(source)).toBe(false);
  });
});
