// Every line the server logs passes through here before it is written: request URLs carry
// customers' addresses (`/customers/ada%40example.com`) and a login link's token
// (`/dashboard/sign-in/link/wdl_…`), and a mail logged in development names its
// recipient. Scrubbing the written line, not each call site, covers the request logger,
// error stacks and messages alike, including ones added later. A line is a few hundred
// bytes and two are written per request, so two regular expressions cost little.

// Secrets and bearer tokens by their prefixes: API keys, webhook and Stripe secrets,
// dashboard session, link and browser tokens, device tokens, licence keys; the hosted
// pages' session and browser tokens, hand-off codes, page tickets and the tickets held for a page's question.
const SECRET = /\b(wk_test|wk_live|whsec|whsk|wdl|wds|wdb|wdt|wlk|wcs|wcb|wac|wpt|wph|sk_test|sk_live|rk_test|rk_live)_[0-9A-Za-z]{4,}/g;
// A page ticket in a hosted page's query, whatever its shape: it may open a session until spent.
const TICKET = /([?&]ticket=)[^&\s"]+/g;
// An address as typed, or percent-encoded in a path or query (%40, and %2540 once more);
// its local part with the characters encodeURIComponent leaves as they are (! ' * ~).
const EMAIL = /[A-Za-z0-9._%+!'*~-]+(?:@|%40|%2540)[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g;
// An @ however a URL spells it (%40, or %2540 encoded twice; hex digits in either case).
const AT = /@|%40|%2540/i;
// Query parameters that hold an address or part of one even without its @: a search of
// customers by part of an address (`q=lovelace`), an address field being typed.
const ADDRESS_PARAMS = new Set(["q", "email"]);

/** A text with its secrets cut to their prefix and its email addresses replaced. */
export function redactSecrets(text: string): string {
  return text.replace(SECRET, "$1_[redacted]").replace(TICKET, "$1[redacted]").replace(EMAIL, "[email]");
}

/** A query parameter's name as the server reads it (`%71` is `q`); as written when it does not decode. */
function paramName(raw: string): string {
  try {
    return decodeURIComponent(raw.replaceAll("+", " "));
  } catch {
    return raw;
  }
}

/**
 * A request's URL as the log keeps it: every path segment and query value that holds an @
 * (an address, or part of one such as a search for `ada@`), and the address parameters
 * whatever they hold, become `[email]`. By the URL's own parts, so an address that the
 * line's pattern would not know for one (no top-level domain, an unusual local part, a
 * fragment typed into a search) does not reach the log either.
 */
export function redactUrl(url: string): string {
  const queryAt = url.indexOf("?");
  const path = queryAt < 0 ? url : url.slice(0, queryAt);
  const redactedPath = path
    .split("/")
    .map((segment) => (AT.test(segment) ? "[email]" : segment))
    .join("/");
  if (queryAt < 0) return redactedPath;
  const query = url
    .slice(queryAt + 1)
    .split("&")
    .map((pair) => {
      const eq = pair.indexOf("=");
      if (eq < 0) return AT.test(pair) ? "[email]" : pair;
      const value = pair.slice(eq + 1);
      return AT.test(value) || ADDRESS_PARAMS.has(paramName(pair.slice(0, eq))) ? `${pair.slice(0, eq)}=[email]` : pair;
    })
    .join("&");
  return `${redactedPath}?${query}`;
}

/** A destination for the logger that writes each line redacted to `to`. */
export function redactingStream(to: { write(line: string): unknown }): { write(line: string): void } {
  return {
    write(line: string) {
      to.write(redactSecrets(line));
    },
  };
}
