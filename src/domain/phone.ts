import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js';

/**
 * Normalises a phone number to E.164, or returns undefined when it is not a possible number.
 * A number without a leading `+` is read in the default country. `isPossible()` (length per
 * country) is the durable check: `isValid()` follows numbering plans that change over time.
 */
export function normalisePhone(raw: string, defaultCountry: string): string | undefined {
  const parsed = parsePhoneNumberFromString(raw.trim(), defaultCountry as CountryCode);
  if (!parsed || !parsed.isPossible()) return undefined;
  return parsed.number;
}

export const isBlank = (value: string | undefined | null): boolean => value === undefined || value === null || value.trim() === '';
