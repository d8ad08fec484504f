// Cookies read and written by hand: two cookies, one attribute set, no package needed.

export function parseCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  if (!header) return cookies;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    // The first of two same-named cookies is the one with the longer path (RFC 6265 §5.4): keep it.
    if (name !== "" && !cookies.has(name)) cookies.set(name, part.slice(eq + 1).trim());
  }
  return cookies;
}

/**
 * A cookie the page's scripts cannot read (HttpOnly), not sent on cross-site posts
 * (SameSite=Lax), for the whole host unless `path` narrows it; Secure over HTTPS, where
 * the caller also names it with the `__Host-` prefix (the whole host) or `__Secure-` (a
 * path) so that no plain-HTTP page can plant one.
 */
export function serialiseCookie(name: string, value: string, options: { secure: boolean; maxAgeSeconds?: number; path?: string }): string {
  const parts = [`${name}=${value}`, `Path=${options.path ?? "/"}`, "HttpOnly", "SameSite=Lax"];
  if (options.secure) parts.push("Secure");
  if (options.maxAgeSeconds !== undefined) parts.push(`Max-Age=${options.maxAgeSeconds}`);
  return parts.join("; ");
}
