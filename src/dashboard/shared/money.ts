// Amounts as people type them on a page, in the currency's major unit ("49.00" euros,
// "500" yen), turned into the minor units the use cases, the API and the CLI take. The
// number of decimals is Intl's for the currency, which is how Stripe counts them too.

/** What the use case stores at most (createPlan: a safe integer of minor units). */
const MAX_MINOR_UNITS = BigInt(Number.MAX_SAFE_INTEGER);

interface CurrencyWords {
  /** Digits after the point: 2 for eur, 0 for jpy, 3 for kwd. */
  decimals: number;
  /** The unit in plain words, plural: "euros", "Japanese yen", "Kuwaiti dinars". */
  unitName: string;
  /** An amount to copy the shape of: "49.00", "500", "49.000". */
  example: string;
}

/** A currency's formats: its digits after the point, the amount in full (`€1,234.00`) and short (`€1.2K`). */
export interface CurrencyFormat {
  /** As Stripe counts them: 2 for eur, 0 for jpy, 3 for kwd. */
  digits: number;
  full: Intl.NumberFormat;
  compact: Intl.NumberFormat;
}

// Making an Intl.NumberFormat takes tens of microseconds, and an Insights page formats
// thousands of amounts: made anew each time, they were 29% of those pages' CPU (bench
// scenario 9, 2026-11-27). So each currency's formats are made once. Only three-letter
// codes are kept (at most 17,576 of them), so a code typed into a form cannot grow the map.
const formats = new Map<string, CurrencyFormat | null>();

/** The currency's formats, or null for a code Intl does not know. */
export function currencyFormat(currency: string): CurrencyFormat | null {
  const code = currency.toUpperCase();
  const kept = formats.get(code);
  if (kept !== undefined) return kept;
  let made: CurrencyFormat | null;
  try {
    const full = new Intl.NumberFormat("en", { style: "currency", currency: code });
    const compact = new Intl.NumberFormat("en", { style: "currency", currency: code, notation: "compact", maximumFractionDigits: 1 });
    made = { digits: full.resolvedOptions().maximumFractionDigits ?? 2, full, compact };
  } catch {
    made = null;
  }
  if (/^[A-Z]{3}$/.test(code)) formats.set(code, made);
  return made;
}

/**
 * The digits after the point of a currency, as Stripe counts them (2 for eur, 0 for jpy,
 * 3 for kwd), or null for a code Intl does not know.
 */
export function currencyDigits(currency: string): number | null {
  return currencyFormat(currency)?.digits ?? null;
}

/** The currency as Intl knows it, or null when the code is not three letters. */
function currencyWords(currency: string): CurrencyWords | null {
  const code = currency.trim().toUpperCase();
  if (!/^[A-Z]{3}$/.test(code)) return null;
  const decimals = currencyDigits(code);
  if (decimals === null) return null;
  const named = new Intl.NumberFormat("en", { style: "currency", currency: code, currencyDisplay: "name" }).formatToParts(2);
  const unitName = named.find((part) => part.type === "currency")?.value ?? code;
  const example = decimals === 0 ? "500" : `49.${"0".repeat(decimals)}`;
  return { decimals, unitName, example };
}

export type ParsedAmount = { ok: true; minorUnits: number } | { ok: false; param: "amount-cents" | "currency"; message: string };

// Digits with an optional point; commas only as thousands separators ("1,234.50"), since a
// comma as the decimal mark ("49,00") would make "1,234" mean two different amounts.
const AMOUNT = /^(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?$/;

/**
 * "49.00" euros is 4900 minor units, "500" yen is 500. Refused in plain words, tied to
 * the amount field: not a number, negative, more decimals than the currency has (none for
 * yen), more than Warden stores. A currency that is not three letters is refused on its own
 * field, since the amount cannot be read without it.
 */
export function parseMajorAmount(typed: string, currency: string): ParsedAmount {
  const words = currencyWords(currency);
  if (words === null) return { ok: false, param: "currency", message: "Enter the currency as three letters, like eur." };
  const { decimals, unitName, example } = words;
  const text = typed.trim();
  if (/^-\s*[\d.,]+$/.test(text))
    return { ok: false, param: "amount-cents", message: `The amount cannot be negative: enter 0 or more ${unitName}, like ${example}.` };
  const match = AMOUNT.exec(text);
  if (match === null) return { ok: false, param: "amount-cents", message: `Enter the amount in ${unitName}, like ${example}.` };
  const whole = (match[1] ?? "").replaceAll(",", "");
  const fraction = match[2] ?? "";
  if (fraction.length > decimals) {
    const message =
      decimals === 0
        ? `Amounts in ${unitName} have no decimals: enter a whole number, like ${example}.`
        : `Amounts in ${unitName} have at most ${decimals} decimals: enter an amount like ${example}.`;
    return { ok: false, param: "amount-cents", message };
  }
  const minor = BigInt(whole + fraction.padEnd(decimals, "0"));
  if (minor > MAX_MINOR_UNITS) {
    const most = (MAX_MINOR_UNITS / 10n ** BigInt(decimals)).toLocaleString("en");
    return { ok: false, param: "amount-cents", message: `The amount is too large: enter at most ${most} ${unitName}.` };
  }
  return { ok: true, minorUnits: Number(minor) };
}
