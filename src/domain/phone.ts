import { getCountries, getCountryCallingCode, Metadata, parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js';

/**
 * Normalises a phone number to E.164, or returns undefined when it is not a possible number.
 * A number without a leading `+` is read in the default country. `isPossible()` (length per
 * country) is the durable check: `isValid()` follows numbering plans that change over time.
 */
export function normalisePhone(raw: string, defaultCountry: string): string | undefined {
  const text = raw.trim();
  const possible = e164Possible(text);
  if (possible !== undefined) return possible ? text : undefined;
  const parsed = parsePhoneNumberFromString(text, defaultCountry as CountryCode);
  if (!parsed || !parsed.isPossible()) return undefined;
  return parsed.number;
}

export const isBlank = (value: string | undefined | null): boolean => value === undefined || value === null || value.trim() === '';

/*
 * Most integrations send E.164 already, and the library's parse of it is a large part of an
 * upsert's CPU in the web process: for a calling code that several countries
 * share (+1 has 25), the library tries each country's number-type patterns until one matches, to
 * name the country. We never need the country, only the E.164 form and whether it is possible,
 * and for most numbers neither depends on which country it is. `e164Possible` answers those
 * numbers from the same metadata the library reads, and leaves every other one to the library:
 * test/domain/phone.test.ts holds it equal to the library over every calling code and length.
 */

/** A plain `+` and digits, as E.164 writes a number; anything else goes to the library. */
const E164_SHAPE = /^\+[1-9]\d{1,17}$/;
/** Calling codes are one to three digits long, and none is the start of another. */
const LONGEST_CALLING_CODE = 3;
/** The longest national number the library parses; longer ones are never possible. */
const LONGEST_NATIONAL_NUMBER = 17;

/** What a calling code's countries agree on, read once from the library's metadata. */
interface CallingCodeRule {
  /** What the library would strip from the national number as a national prefix (its own pattern). */
  nationalPrefix: RegExp | undefined;
  /** For each national-number length on which all the code's countries agree, whether it is possible. */
  possibleByLength: Map<number, boolean>;
}

/** The parts of the library's metadata this reads; its typings name only `possibleLengths`. */
interface NumberingPlanReadings {
  possibleLengths(): number[] | undefined;
  nationalPrefixForParsing(): string | undefined;
}

const metadata = new Metadata();
const rules = new Map<string, CallingCodeRule | null>();
let countriesByCallingCode: Map<string, CountryCode[]> | undefined;

function countriesOf(callingCode: string): CountryCode[] | undefined {
  if (!countriesByCallingCode) {
    countriesByCallingCode = new Map();
    for (const country of getCountries()) {
      const code = getCountryCallingCode(country);
      countriesByCallingCode.set(code, [...(countriesByCallingCode.get(code) ?? []), country]);
    }
  }
  return countriesByCallingCode.get(callingCode);
}

/** The plan of a country or calling code; read it before selecting another. */
function planOf(codeOrCountry: string): NumberingPlanReadings {
  metadata.selectNumberingPlan(codeOrCountry as CountryCode);
  return metadata.numberingPlan as unknown as NumberingPlanReadings;
}

/**
 * The rule for `callingCode`, or null when no country has that code (non-geographic codes, such
 * as +800, are left to the library too) or its plans give no lengths.
 */
function ruleFor(callingCode: string): CallingCodeRule | null {
  const known = rules.get(callingCode);
  if (known !== undefined) return known;
  let rule: CallingCodeRule | null = null;
  const countries = countriesOf(callingCode);
  if (countries) {
    const lengths = countries.map((country) => planOf(country).possibleLengths());
    if (lengths.every((each) => each && each.length > 0)) {
      // The library reads the national prefix by the code's main country before it names one.
      const prefix = planOf(callingCode).nationalPrefixForParsing();
      const possibleByLength = new Map<number, boolean>();
      for (let length = 0; length <= LONGEST_NATIONAL_NUMBER; length++) {
        const verdicts = new Set(lengths.map((each) => each!.includes(length)));
        if (verdicts.size === 1) possibleByLength.set(length, [...verdicts][0]!);
      }
      rule = { nationalPrefix: prefix ? new RegExp(`^(?:${prefix})`) : undefined, possibleByLength };
    }
  }
  rules.set(callingCode, rule);
  return rule;
}

/**
 * Whether `text`, an E.164 number, is possible (and so its own normal form); undefined when the
 * library has to decide: not E.164, a national prefix it might strip, or a length the code's
 * countries disagree on (+1 with 7 digits is possible in Canada alone).
 */
function e164Possible(text: string): boolean | undefined {
  if (!E164_SHAPE.test(text)) return undefined;
  for (let length = 1; length <= LONGEST_CALLING_CODE; length++) {
    const rule = ruleFor(text.slice(1, 1 + length));
    if (rule === null) continue; // no calling code this long: try a longer one
    const national = text.slice(1 + length);
    if (rule.nationalPrefix?.test(national)) return undefined;
    return rule.possibleByLength.get(national.length);
  }
  return undefined;
}
