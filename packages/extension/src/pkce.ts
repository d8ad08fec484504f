// OAuth 2.0 PKCE (RFC 7636, S256) for the hosted sign-in page's hand-off: the page
// answers a one-time code in the redirect's fragment, and only the part of the extension
// that holds the verifier can exchange it for a device session.

const base64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");

/** 32 random bytes, base64url: a code verifier (43 characters), or a state. */
export function randomToken(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(32)));
}

/** The S256 challenge of a verifier: base64url(SHA-256(verifier)). */
export async function challengeOf(verifier: string): Promise<string> {
  return base64url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))));
}

/** The code and state a redirect carries in its fragment (never in its query: a fragment is not sent to any server). */
export function fragmentOf(url: string): { code: string | null; state: string | null; error: string | null } {
  const hash = new URL(url).hash.replace(/^#/, "");
  const params = new URLSearchParams(hash);
  return { code: params.get("code"), state: params.get("state"), error: params.get("error") };
}
