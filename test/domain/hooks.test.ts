import { describe, expect, it } from 'vitest';
import { errorCode } from '../support/domainErrors.js';
import { MAX_TARGET_URL_LENGTH, validateEventType, validateTargetUrl } from '../../src/domain/hooks.js';

/** An https URL of exactly `length` characters. */
const urlOfLength = (length: number) => {
  const base = 'https://example.com/';
  return base + 'a'.repeat(length - base.length);
};

describe('validateTargetUrl', () => {
  it.each(['https://example.com/hooks', 'https://example.com', 'https://hooks.example.com:8443/a/b?x=1#f', 'HTTPS://EXAMPLE.COM/x'])(
    'accepts %j and returns it as given',
    (url) => {
      expect(validateTargetUrl(url)).toBe(url);
    },
  );

  it(`accepts a URL of exactly ${MAX_TARGET_URL_LENGTH} characters`, () => {
    const url = urlOfLength(2048);
    expect(url).toHaveLength(2048);
    expect(validateTargetUrl(url)).toBe(url);
  });

  it('refuses a URL of 2049 characters', () => {
    expect(errorCode(() => validateTargetUrl(urlOfLength(2049)))).toBe('invalid_target_url');
  });

  it.each([
    ['http:', 'http://example.com/hooks'],
    ['another scheme', 'ftp://example.com/hooks'],
    ['no host', 'https://'],
    ['no host, only a port', 'https://:443/hooks'],
    ['a scheme only', 'https:'],
    ['relative', '/hooks'],
    ['unparseable', 'not a url'],
    ['empty', ''],
    ['user and password', 'https://user:secret@example.com/hooks'],
    ['user only', 'https://user@example.com/hooks'],
    ['password only', 'https://:secret@example.com/hooks'],
    ['a leading space', ' https://example.com/hooks'],
    ['a trailing newline', 'https://example.com/hooks\n'],
    ['a space in the path', 'https://example.com/my hooks'],
    ['a tab in the host', 'https://exam\tple.com/hooks'],
    ['a NUL', 'https://example.com/\u0000'],
  ])('refuses %s (%j) as invalid_target_url', (_why, url) => {
    expect(errorCode(() => validateTargetUrl(url))).toBe('invalid_target_url');
  });

  it.each([undefined, null, 42, {}])('refuses the non-string %j as invalid_target_url', (url) => {
    expect(errorCode(() => validateTargetUrl(url))).toBe('invalid_target_url');
  });
});

describe('validateEventType', () => {
  it.each(['new_conversation', 'missed_call', 'new_contact'])('accepts %s', (event) => {
    expect(validateEventType(event)).toBe(event);
  });

  it.each(['', 'New_Contact', 'new_call', undefined, null, 1])('refuses %j as invalid_event', (event) => {
    expect(errorCode(() => validateEventType(event))).toBe('invalid_event');
  });
});
