// Addresses are matched in a normalised form (decisions.md): lower-cased, and for Gmail
// the dots of the local part dropped and googlemail.com folded into gmail.com. A +tag
// is kept: it is a different address.

const GMAIL_DOMAINS = new Set(["gmail.com", "googlemail.com"]);

// Deliberately plain: one @, a local part without spaces or controls, a domain of
// dot-separated labels ending in a letter label. Full RFC 5322 allows forms (quoted
// local parts, IP literals) that no checkout or sign-in form produces.
const ADDRESS_SHAPE =
  /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.[A-Za-z]{2,63}$/;

export const MAX_EMAIL_LENGTH = 254;

export function isEmailShape(value: string): boolean {
  if (value.length > MAX_EMAIL_LENGTH || !ADDRESS_SHAPE.test(value)) return false;
  const local = value.slice(0, value.lastIndexOf("@"));
  return local.length <= 64 && !local.startsWith(".") && !local.endsWith(".") && !local.includes("..");
}

/**
 * Only ASCII letters are folded: Unicode lower-casing maps some other characters onto
 * ASCII (the Kelvin sign K, U+212A, becomes k), which let a retrieve of "Known@…" find
 * "known@…", an address that create-grant refuses to spell that way.
 */
export function normaliseEmail(value: string): string {
  const lower = value.trim().replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
  const at = lower.lastIndexOf("@");
  if (at < 0) return lower;
  const local = lower.slice(0, at);
  const domain = lower.slice(at + 1);
  if (GMAIL_DOMAINS.has(domain)) return `${local.replaceAll(".", "")}@gmail.com`;
  return lower;
}
