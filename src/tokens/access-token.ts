// The signed access token: a compact JWS (RFC 7515) over JWT claims (RFC 7519), signed
// with Ed25519 (RFC 8037, `alg` EdDSA) by node:crypto alone. A vendor's server or an
// extension verifies it offline against GET /.well-known/jwks.json; docs/api.md
// ("Access tokens") says what each claim means.
import { type KeyObject, sign } from "node:crypto";
import type { Env } from "../db/schema.js";

/** The key that signs now, ready to use (signing-key.service.ts keeps it). */
export interface Signer {
  kid: string;
  key: KeyObject;
  /** The token's encoded protected header, the same for every token of this key. */
  encodedHeader: string;
}

/** A token lives no longer than an access answer may be kept: a revocation locks within 15 minutes. */
export const MAX_TOKEN_SECONDS = 900;

/** `iss` of every token. Tokens of different workspaces and environments differ by `aud`. */
export const TOKEN_ISSUER = "warden";

export interface AccessClaims {
  iss: typeof TOKEN_ISSUER;
  /** `<workspace slug>:<env>`: a verifier names the one it accepts. */
  aud: string;
  /** The person's id; for a device activated with a licence key (no sign-in), the device's id. */
  sub: string;
  email: string | null;
  workspace: string;
  env: Env;
  tool: string;
  entitled: boolean;
  via: "licence" | "subscription" | "trial" | "grant" | null;
  /** The plan's id. */
  plan: string | null;
  /** The tool's features the person holds, sorted ([] when none). */
  features: string[];
  /** When the trial ends (or ended), seconds since the epoch. */
  trial_ends_at: number | null;
  iat: number;
  exp: number;
}

export const audienceOf = (workspaceSlug: string, env: Env) => `${workspaceSlug}:${env}`;

/** The compact serialisation: header, claims and signature, each base64url, joined by dots. */
export function signAccessToken(signer: Signer, claims: AccessClaims): string {
  const signingInput = `${signer.encodedHeader}.${Buffer.from(JSON.stringify(claims)).toString("base64url")}`;
  return `${signingInput}.${sign(null, Buffer.from(signingInput), signer.key).toString("base64url")}`;
}

/**
 * How long a copy of the JWK Set may be kept. A verifier that meets an unknown kid
 * fetches it again (jose's createRemoteJWKSet does), so this only spares requests.
 */
export const JWKS_MAX_AGE_SECONDS = 300;
