// What a failed delivery attempt means, in a sentence a vendor can act on, before the raw
// detail the sender recorded (webhooks/sender.ts: "ECONNREFUSED: connect …", "timeout
// after 10000 ms", an HTTP status). The raw detail stays shown: it is what a log or a
// support thread names.

export interface FailureWords {
  plain: string;
  /** What was recorded, as it was recorded. */
  raw: string;
}

// Node's network and TLS error codes a receiver's set-up produces, by what the vendor can do.
const BY_CODE: Record<string, string> = {
  ECONNREFUSED: "Your server refused the connection: nothing listens at that address and port",
  ECONNRESET: "Your server closed the connection before answering",
  EPIPE: "Your server closed the connection before answering",
  ENOTFOUND: "The endpoint's host name does not exist in DNS",
  EAI_AGAIN: "The endpoint's host name could not be looked up (DNS did not answer)",
  ETIMEDOUT: "The connection to your server timed out",
  EHOSTUNREACH: "Your server's address cannot be reached from here",
  ENETUNREACH: "Your server's network cannot be reached from here",
  EPRIVATE: "The endpoint's host resolves only to private addresses, which Warden does not call",
  CERT_HAS_EXPIRED: "Your server's TLS certificate has expired",
  DEPTH_ZERO_SELF_SIGNED_CERT: "Your server's TLS certificate is self-signed, so it cannot be trusted",
  SELF_SIGNED_CERT_IN_CHAIN: "Your server's TLS certificate chain is self-signed, so it cannot be trusted",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "Your server's TLS certificate chain is incomplete or not trusted",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: "Your server's TLS certificate chain is incomplete or not trusted",
  ERR_TLS_CERT_ALTNAME_INVALID: "Your server's TLS certificate is for another host name",
  EPROTO: "The TLS handshake with your server failed",
};

function statusWords(status: number): string {
  if (status >= 300 && status < 400) return "Your server answered with a redirect, which Warden does not follow: give the final URL";
  if (status === 401 || status === 403) return "Your server refused the request: check that it verifies the signature with this endpoint's secret";
  if (status === 404) return "Your server has no page at this URL";
  if (status === 408 || status === 504) return "Your server, or a proxy before it, timed out";
  if (status === 410) return "Your server answered 410 Gone, which disables the endpoint";
  if (status === 413) return "Your server found the event too large";
  if (status === 429) return "Your server asked Warden to slow down";
  if (status === 502 || status === 503) return "Your server, or a proxy before it, is unavailable";
  if (status >= 500) return "Your server failed while handling the event";
  return "Your server refused the event";
}

/** The words for one attempt, or null when it succeeded (a 2xx answer). */
export function deliveryFailureWords(attempt: { statusCode: number | null; error: string | null }): FailureWords | null {
  if (attempt.statusCode !== null) {
    if (attempt.statusCode >= 200 && attempt.statusCode < 300) return null;
    return { plain: statusWords(attempt.statusCode), raw: `HTTP ${attempt.statusCode}` };
  }
  const raw = attempt.error ?? "no answer";
  const timeout = /^timeout after (\d+) ms$/.exec(raw);
  if (timeout) {
    const ms = Number(timeout[1]);
    return { plain: `Timed out after ${ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`}: your server did not answer in time`, raw };
  }
  if (raw.startsWith("refused: ")) return { plain: "The endpoint's address is private, which Warden does not call unless allowed", raw };
  if (raw === "invalid endpoint URL") return { plain: "The endpoint's URL cannot be read: edit it", raw };
  if (raw.startsWith("could not sign")) return { plain: "Warden could not sign the event: the endpoint's secret cannot be opened with this server's key", raw };
  const code = /^([A-Z][A-Z0-9_]+):/.exec(raw)?.[1];
  const known = code === undefined ? undefined : BY_CODE[code];
  if (known !== undefined) return { plain: known, raw };
  return { plain: attempt.error === null ? "Your server did not answer" : "The request to your server failed", raw };
}
