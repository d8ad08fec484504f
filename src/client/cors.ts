// Which web origins may call the client API from a browser. Browser extensions (their
// pages and background workers send their own origin) always may: the API is
// authenticated by a bearer token, never a cookie, so no credentials are allowed
// cross-origin either way. Other web origins only when the operator lists them.
const EXTENSION_ORIGIN = /^(chrome-extension|moz-extension|safari-web-extension|ms-browser-extension):\/\/[A-Za-z0-9._-]+$/;

export function isAllowedClientOrigin(origin: string | undefined, configured: readonly string[]): boolean {
  if (origin === undefined) return false;
  return EXTENSION_ORIGIN.test(origin) || configured.includes(origin);
}
