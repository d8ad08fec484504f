import type { Kysely } from "kysely";

// The Ed25519 keys that sign access tokens (src/tokens/). Each key has a generation:
// the first start of any process inserts generation 1 and a rotation the next one, and
// the unique index lets exactly one of several processes racing on the same generation
// win. The newest generation signs; an older one stops signing when the next is made
// (its `created_at`) and stays published until every token it signed has expired. The
// private key is sealed under WARDEN_SECRET_KEY like webhook secrets, never in clear.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("signing_keys")
    .addColumn("kid", "text", (c) => c.primaryKey())
    .addColumn("generation", "integer", (c) => c.notNull().unique())
    // The public key's JWK `x`: 32 bytes, base64url.
    .addColumn("public_x", "text", (c) => c.notNull())
    // The private key's JWK `d`, sealed (src/webhooks/secret-box.ts).
    .addColumn("private_sealed", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
}
