// Phones as mailing tools read them: E.164 (`+33612345678`), the country code after a `+` and the
// digits with nothing between. The database stores a phone as the visitor typed it (trimmed; no
// format check: supabase/schemas/10_early_access.sql), so `+44 20 7946 0000`, `0044 20 7946 0000`
// and `06 12 34 56 78` all arrive; libphonenumber-js (Google's libphonenumber's rules) reads them.
import { isSupportedCountry, parsePhoneNumberFromString, type CountryCode } from "libphonenumber-js";

/**
 * The phone in E.164, or null when it cannot be read as a valid number: one with its country code
 * (`+44 …`, or `00 44 …`), or a national one (`06 12 34 56 78`) given the `country` it is
 * dialled in. A national number without a country is not guessed.
 */
export function toE164(phone: string, country?: CountryCode): string | null {
  const typed = phone.trim();
  // Without a country to dial from, `00` is taken for the international prefix most of the world uses.
  const international = country === undefined ? typed.replace(/^00(?=[1-9])/, "+") : typed;
  const parsed = parsePhoneNumberFromString(
    international,
    country === undefined ? undefined : { defaultCountry: country },
  );
  return parsed?.isValid() ? parsed.number : null;
}

/** An ISO 3166-1 alpha-2 country code (`FR`, `us`) as libphonenumber-js knows it; null for anything else. */
export function countryCode(text: string): CountryCode | null {
  const code = text.trim().toUpperCase();
  return isSupportedCountry(code) ? code : null;
}
