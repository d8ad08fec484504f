// `warden admin key …`: a workspace's API keys, listed (never the secret), created
// (shown once) and revoked.

import { type Command, optStr, str } from "./command.js";
import { isoOrNull, listText, minute } from "./table.js";

export const keyCommands: Record<string, Command> = {
  "admin key list": {
    summary: "List a workspace's API keys (never their secrets), with when each was last used.",
    usage: "warden admin key list --workspace S [--env test|live]",
    options: { workspace: { type: "string" }, env: { type: "string" } },
    required: ["workspace"],
    async run({ values: v, services }) {
      const { listKeys } = await import("../workspaces/workspace.service.js");
      const keys = await listKeys(await services(), { workspace: str(v, "workspace"), env: optStr(v, "env") });
      // Keys made before migration 013 have no last four to show.
      const shown = (k: { env: string; lastFour: string | null }) => `wk_${k.env}_…${k.lastFour ?? ""}`;
      return {
        json: keys.map((k) => ({
          id: k.id,
          name: k.name,
          env: k.env,
          key: shown(k),
          created_at: isoOrNull(k.createdAt),
          last_used_at: isoOrNull(k.lastUsedAt),
          revoked_at: isoOrNull(k.revokedAt),
        })),
        text: listText(
          "No keys.",
          ["ID", "ENV", "KEY", "CREATED", "LAST USED", "REVOKED", "NAME"],
          keys.map((k) => [
            k.id,
            k.env,
            shown(k),
            minute(k.createdAt),
            k.lastUsedAt === null ? "never" : minute(k.lastUsedAt),
            minute(k.revokedAt),
            k.name ?? "",
          ]),
        ),
      };
    },
  },
  "admin key create": {
    summary: "Create an API key for a workspace's test or live environment; shown this once.",
    usage: "warden admin key create --workspace S --env test|live [--name N]",
    options: { workspace: { type: "string" }, env: { type: "string" }, name: { type: "string" } },
    required: ["workspace", "env"],
    async run({ values: v, services }) {
      const { createKey } = await import("../workspaces/workspace.service.js");
      const { db, clock } = await services();
      const key = await createKey(db, clock, { workspace: str(v, "workspace"), env: str(v, "env"), name: optStr(v, "name") });
      // The key itself is shown this once; only its hash is stored.
      return { json: { id: key.id, key: key.key }, text: `${JSON.stringify({ id: key.id, key: key.key })}\nKeep the key now: it is not shown again.` };
    },
  },
  "admin key revoke": {
    summary: "Revoke an API key: it answers 401 from the next request.",
    usage: "warden admin key revoke --id KEY_ID",
    options: { id: { type: "string" } },
    required: ["id"],
    async run({ values: v, services }) {
      const { revokeKey } = await import("../workspaces/workspace.service.js");
      const { db, clock } = await services();
      const revoked = await revokeKey(db, clock, { id: str(v, "id") });
      return { json: { id: revoked.id, revoked_at: new Date(revoked.revokedAt).toISOString() }, text: `Revoked ${revoked.id}.` };
    },
  },
};
