import { describe, expect, it } from 'vitest';
import { validateContact, validateOwnerEdit } from '../../src/domain/contact.js';
import { errorCode } from '../support/domainErrors.js';
import { normalisePhone } from '../../src/domain/phone.js';

describe('normalisePhone', () => {
  it.each(['+1 (415) 555-0100', '+14155550100', '415-555-0100', '(415) 555 0100', '  +1 415.555.0100  '])('reads %j as +14155550100 in US', (raw) => {
    expect(normalisePhone(raw, 'US')).toBe('+14155550100');
  });

  it('reads a number without + in the default country', () => {
    expect(normalisePhone('020 7946 0000', 'GB')).toBe('+442079460000');
    expect(normalisePhone('020 7946 0000', 'US')).toBeUndefined();
  });

  it('ignores the default country when the number carries its own code', () => {
    expect(normalisePhone('+44 20 7946 0000', 'US')).toBe('+442079460000');
  });

  it.each(['123', '+1 555', 'not a phone', '+999 123456789', '1'.repeat(30)])('refuses the impossible number %j', (raw) => {
    expect(normalisePhone(raw, 'US')).toBeUndefined();
  });
});

describe('validateContact', () => {
  it.each([undefined, '', '   ', '\t\n'])('rejects the blank phone %j as 400 missing_phone', (phone) => {
    expect(errorCode(() => validateContact({ phone, name: 'Ann' }, 'US'))).toBe('missing_phone');
  });

  it('skips an impossible phone as invalid_phone, with no phone to match', () => {
    expect(validateContact({ phone: '123', name: 'Ann' }, 'US')).toStrictEqual({ skip: 'invalid_phone' });
  });

  it('gives the three spellings of one US number the same E.164 phone', () => {
    const phones = ['+1 (415) 555-0100', '+14155550100', '415-555-0100'].map((phone) => validateContact({ phone }, 'US'));
    expect(phones).toStrictEqual(Array(3).fill({ phone: '+14155550100', fields: {} }));
  });

  it('trims name and email and keeps them', () => {
    expect(validateContact({ phone: '+14155550100', name: '  Ann Lee ', email: ' ann@example.com ' }, 'US')).toStrictEqual({
      phone: '+14155550100',
      fields: { name: 'Ann Lee', email: 'ann@example.com' },
    });
  });

  it('drops an empty or blank name and email instead of writing them', () => {
    expect(validateContact({ phone: '+14155550100', name: '', email: '   ' }, 'US')).toStrictEqual({ phone: '+14155550100', fields: {} });
  });

  it.each(['not-an-email', 'a@b', 'two@@example.com', 'sp ace@example.com', `${'a'.repeat(250)}@example.com`])(
    'skips the email %j as invalid_email, keeping the phone to match',
    (email) => {
      expect(validateContact({ phone: '415-555-0100', email }, 'US')).toStrictEqual({ skip: 'invalid_email', phone: '+14155550100' });
    },
  );

  it('skips a name over 256 characters as invalid_name', () => {
    expect(validateContact({ phone: '+14155550100', name: 'x'.repeat(257) }, 'US')).toStrictEqual({
      skip: 'invalid_name',
      phone: '+14155550100',
    });
    expect(validateContact({ phone: '+14155550100', name: 'x'.repeat(256) }, 'US')).toStrictEqual({
      phone: '+14155550100',
      fields: { name: 'x'.repeat(256) },
    });
  });
});

describe('validateOwnerEdit', () => {
  it('refuses an edit with no field as invalid_request', () => {
    expect(errorCode(() => validateOwnerEdit({}))).toBe('invalid_request');
  });

  it('trims the values it keeps', () => {
    expect(validateOwnerEdit({ name: '  Ann  ', email: ' ann@example.com ' })).toStrictEqual({ name: 'Ann', email: 'ann@example.com' });
  });

  it('turns null or a blank value into a clear (null)', () => {
    expect(validateOwnerEdit({ name: null, email: '  ' })).toStrictEqual({ name: null, email: null });
  });

  it('keeps only the fields given', () => {
    expect(validateOwnerEdit({ email: 'ann@example.com' })).toStrictEqual({ email: 'ann@example.com' });
  });

  it('refuses an invalid email as invalid_email', () => {
    expect(errorCode(() => validateOwnerEdit({ email: 'nope' }))).toBe('invalid_email');
  });

  it('refuses a name over 256 characters as invalid_name', () => {
    expect(errorCode(() => validateOwnerEdit({ name: 'x'.repeat(257) }))).toBe('invalid_name');
  });
});
