// Every line the server logs passes through here before it is written: request URLs carry
// customers' addresses (`/customers/ada%40example.com`) and a login link's token
// (`/dashboard/sign-in/link/wdl_…`), and a mail logged in development names its
// recipient. Scrubbing the written line, not each call site, covers the request logger,
// error stacks and messages alike, including ones added later. A line is a few hundred
// bytes and two are written per request, so two regular expressions cost little.

// Secrets and bearer tokens by their prefixes: API keys, webhook and Stripe secrets,
// dashboard session, link and browser tokens, device tokens, licence keys; the hosted
// pages' session and browser tokens, hand-off codes and page tickets.
const SECRET = /\b(wk_test|wk_live|whsec|whsk|wdl|wds|wdb|wdt|wlk|wcs|wcb|wac|wpt|sk_test|sk_live|rk_test|rk_live)_[0-9A-Za-z]{4,}/g;
// A page ticket in a hosted page's query, whatever its shape: it may open a session until spent.
const TICKET = /([?&]ticket=)[^&\s"]+/g;
// An address as typed, or percent-encoded in a path or query (%40, and %2540 once more).
const EMAIL = /[A-Za-z0-9._%+-]+(?:@|%40|%2540)[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g;

/** A text with its secrets cut to their prefix and its email addresses replaced. */
export function redactSecrets(text: string): string {
  return text.replace(SECRET, "$1_[redacted]").replace(TICKET, "$1[redacted]").replace(EMAIL, "[email]");
}

/** A destination for the logger that writes each line redacted to `to`. */
export function redactingStream(to: { write(line: string): unknown }): { write(line: string): void } {
  return {
    write(line: string) {
      to.write(redactSecrets(line));
    },
  };
}
