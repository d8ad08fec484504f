// `warden admin signing-key list|rotate`: the Ed25519 keys that sign access tokens.
// Kept in their own file so that admin.commands.ts only lists them.
import type { SigningKeyState } from "../tokens/signing-key.service.js";
import type { Command } from "./command.js";
import { formatTable, isoOrNull, minute } from "./table.js";

const keyJson = (key: SigningKeyState) => ({
  kid: key.kid,
  generation: key.generation,
  state: key.state,
  created_at: isoOrNull(key.createdAt),
  retired_at: isoOrNull(key.retiredAt),
  published_until: isoOrNull(key.publishedUntil),
});

export const signingKeyCommands: Record<string, Command> = {
  "admin signing-key list": {
    summary: "List the keys that sign access tokens: the active one, and those retired but still in the JWK Set until their tokens expire.",
    usage: "warden admin signing-key list",
    options: {},
    async run({ services }) {
      const { listSigningKeyStates } = await import("../tokens/signing-key.service.js");
      const { db, clock } = await services();
      const keys = await listSigningKeyStates(db, clock.now());
      return {
        json: keys.map(keyJson),
        text: formatTable(
          ["KID", "GENERATION", "STATE", "CREATED", "RETIRED", "PUBLISHED UNTIL"],
          keys.map((k) => [k.kid, String(k.generation), k.state, minute(k.createdAt), minute(k.retiredAt), minute(k.publishedUntil)]),
        ),
      };
    },
  },
  "admin signing-key rotate": {
    summary: "Make a new key that signs access tokens from now on; the old one stays in the JWK Set until every token it signed has expired.",
    usage: "warden admin signing-key rotate",
    options: {},
    async run({ services }) {
      const { KEY_REFRESH_MS, PUBLISHED_AFTER_RETIREMENT_MS, rotateSigningKey } = await import("../tokens/signing-key.service.js");
      const { db, clock, secretBox } = await services();
      const { active, pruned } = await rotateSigningKey(db, secretBox, clock.now());
      const gone = pruned.length === 0 ? "" : ` Dropped ${pruned.length} expired key${pruned.length === 1 ? "" : "s"}.`;
      return {
        json: { ...keyJson(active), pruned },
        text: `Key ${active.kid} (generation ${active.generation}) signs from now on; running processes take it within ${KEY_REFRESH_MS / 1000} seconds. The key before it stays in /.well-known/jwks.json for ${PUBLISHED_AFTER_RETIREMENT_MS / 60_000} minutes.${gone}`,
      };
    },
  },
};
