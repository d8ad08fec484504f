import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { commonErrors } from "../http/common.schema.js";
import type { Services } from "../services.js";
import { JWKS_MAX_AGE_SECONDS } from "./access-token.js";
import { Jwks } from "./jwks.schema.js";

// The page a vendor reads: how their server verifies a token, and what it says.
const JWKS_DESCRIPTION = `The JWK Set of the Ed25519 keys that sign the \`token\` of the access check and of a licence activation. Verify a token with any JOSE library against it, with no other call to Warden. No authentication, open to any origin, cacheable for ${JWKS_MAX_AGE_SECONDS} seconds; a token whose \`kid\` is missing from a cached copy follows a rotation: fetch the set again.

A vendor's server, in Node with \`jose\`:

\`\`\`js
import { createRemoteJWKSet, jwtVerify } from "jose";
const keys = createRemoteJWKSet(new URL("https://warden.example.com/.well-known/jwks.json"));
const { payload } = await jwtVerify(token, keys, { issuer: "warden", audience: "acme:live", algorithms: ["EdDSA"] });
\`\`\`

The claims: \`iss\` "warden"; \`aud\` "<workspace slug>:<env>" (check it: it keeps workspaces and environments apart); \`sub\` the person's id (psn_…), or the device's (dev_…) for a device activated with a licence key; \`email\` the person's address, null for such a device; \`workspace\`, \`env\`, \`tool\`; \`entitled\`, \`via\` and \`plan\` (the plan's id) as the answer has them; \`trial_ends_at\` the trial's end in seconds since the epoch, or null; \`iat\`; \`exp\` = iat + recheck_after, never more than 900 seconds later.`;

/**
 * `GET /.well-known/jwks.json`: the public keys that verify access tokens. For anyone:
 * no key, no limit counted, any origin (an extension fetches it from its own). Served
 * from the process's copy of the keys, so it costs no query between two reads of them.
 */
export const jwksRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  app.get(
    "/.well-known/jwks.json",
    {
      schema: {
        operationId: "getJwks",
        summary: "The keys that verify access tokens",
        description: JWKS_DESCRIPTION,
        tags: ["Access tokens"],
        security: [],
        response: { 200: Jwks, ...commonErrors },
      },
    },
    async (_request, reply) => {
      reply.header("Cache-Control", `public, max-age=${JWKS_MAX_AGE_SECONDS}`);
      reply.header("Access-Control-Allow-Origin", "*");
      return { keys: await services.signingKeys.publicKeys() };
    },
  );
};
