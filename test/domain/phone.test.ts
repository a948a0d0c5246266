import fc from 'fast-check';
import { getCountries, getCountryCallingCode, parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js';
import { describe, expect, it } from 'vitest';
import { normalisePhone } from '../../src/domain/phone.js';

/** The library's own answer: what normalisePhone answered before it read E.164 numbers itself. */
function libraryAnswer(raw: string, defaultCountry: string): string | undefined {
  const parsed = parsePhoneNumberFromString(raw.trim(), defaultCountry as CountryCode);
  return parsed && parsed.isPossible() ? parsed.number : undefined;
}

const callingCodes = [...new Set(getCountries().map((country) => getCountryCallingCode(country))), '800', '882', '979'];

/** `length` digits starting with `first`, the rest drawn from a small seeded generator. */
function digits(first: number, length: number, seed: number): string {
  let out = length > 0 ? String(first) : '';
  let state = seed;
  while (out.length < length) {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0; // 32-bit integer steps, exact
    out += String((state >>> 16) % 10);
  }
  return out;
}

describe('normalisePhone reads E.164 numbers as the library does', () => {
  it('for every calling code, national length 0–19 and first digit, in two default countries', () => {
    const differences: string[] = [];
    for (const code of callingCodes) {
      for (let length = 0; length <= 19; length++) {
        for (let first = 0; first <= 9; first++) {
          const number = `+${code}${digits(first, length, length * 10 + first)}`;
          for (const defaultCountry of ['US', 'GB']) {
            const ours = normalisePhone(number, defaultCountry);
            const theirs = libraryAnswer(number, defaultCountry);
            if (ours !== theirs) differences.push(`${number} in ${defaultCountry}: ${ours} vs ${theirs}`);
          }
        }
      }
    }
    expect(differences).toStrictEqual([]);
  });

  it('for the numbers the bench and real traffic send, and for shared codes the library has to name a country for', () => {
    const samples = [
      '+12000000005',
      '+14155550100',
      '+12345678',
      '+112345678901',
      '+16135550100',
      '+1649555010',
      '+447700900123',
      '+441481123456',
      '+4414811234',
      '+61891621234',
      '+6189162123',
      '+599715123',
      '+5997151234',
      '+2906123',
      '+29061234',
    ];
    for (const number of samples) expect(normalisePhone(number, 'US'), number).toBe(libraryAnswer(number, 'US'));
    expect(normalisePhone('+12000000005', 'US')).toBe('+12000000005');
  });

  it('for any digits after a +, with or without spaces around them', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^\+[0-9]{1,20}$/), fc.constantFrom('', ' ', '\t'), fc.constantFrom('US', 'GB', 'CA', 'DE'), (number, pad, country) => {
        expect(normalisePhone(`${pad}${number}${pad}`, country)).toBe(libraryAnswer(number, country));
      }),
      { numRuns: 5_000 },
    );
  });
});
