import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { insertLicence } from "../billing/licence.store.js";
import { insertSubscription } from "../billing/subscription.store.js";
import { ManualClock } from "../clock.js";
import { type Db, migrateToLatest } from "../db/database.js";
import { insertGrant } from "../grants/grant.store.js";
import { newId } from "../ids.js";
import { DIALECTS, unique } from "../test-support/harness.js";
import { emptyStorage, migrateThrough } from "../test-support/migrations.js";
import { createOwner, createTool, createWorkspace } from "../workspaces/workspace.service.js";
import type { ToolScope } from "./customer.store.js";
import { findPersonWithSources } from "./customer-sources.store.js";
import { ensurePerson } from "./person.store.js";

// people.source_kinds (migration 011) decides which of a person's sources a retrieve looks
// for: a bit missing would hide a licence, a subscription or a grant from the answer.

async function seedScope(db: Db, clock: ManualClock): Promise<ToolScope> {
  const ownerEmail = `${unique("owner")}@example.com`;
  await createOwner(db, clock, { email: ownerEmail });
  const slug = unique("ws");
  const workspace = await createWorkspace(db, clock, { slug, name: "Kinds", ownerEmail, plan: "pro" });
  await createTool(db, clock, { workspace: slug, id: "tool", name: "Tool" });
  return { workspaceId: workspace.id, env: "test", toolId: "tool" };
}

/** One source of the given kind for the person, for the scope's tool. */
async function addSource(
  db: Db,
  scope: ToolScope,
  personId: string,
  kind: "licence" | "subscription" | "grant",
  at: number,
  schema: "latest" | "before-011" = "latest",
): Promise<void> {
  const { workspaceId, env, toolId } = scope;
  if (schema === "before-011") {
    // As that schema's code wrote them: today's stores also write what later migrations
    // added (the insights of 031, the trial outcomes of 037), which a schema of 010 lacks.
    const common = { workspace_id: workspaceId, env, person_id: personId, created_at: at };
    if (kind === "licence") {
      await db
        .insertInto("licences")
        .values({ ...common, id: newId("lic"), product_kind: "tool", product_id: toolId, status: "active", purchased_at: at } as never)
        .execute();
    } else if (kind === "subscription") {
      await db
        .insertInto("subscriptions")
        .values({
          ...common,
          id: unique("sub"),
          product_kind: "tool",
          product_id: toolId,
          status: "active",
          current_period_start: at,
          current_period_end: at + 30 * 86_400_000,
          cancel_at_period_end: 0,
        } as never)
        .execute();
    } else {
      await db
        .insertInto("grants")
        .values({ ...common, id: newId("gr"), tool_id: toolId, kind: "grant", starts_at: at, ends_at: null, revoked_at: null, note: null })
        .execute();
    }
    return;
  }
  if (kind === "licence") {
    await insertLicence(db, {
      id: newId("lic"),
      workspaceId,
      env,
      personId,
      productKind: "tool",
      productId: toolId,
      planId: null,
      status: "active",
      purchasedAt: at,
      amountCents: null,
      currency: null,
      paymentIntent: null,
      checkoutSession: null,
      seats: null,
      teamLicenceId: null,
      teamSubscriptionId: null,
      createdAt: at,
    });
  } else if (kind === "subscription") {
    await insertSubscription(db, {
      workspaceId,
      env,
      id: unique("sub"),
      personId,
      productKind: "tool",
      productId: toolId,
      planId: null,
      status: "active",
      currentPeriodStart: at,
      currentPeriodEnd: at + 30 * 86_400_000,
      cancelAtPeriodEnd: false,
      cancelAt: null,
      endedAt: null,
      seats: null,
      createdAt: at,
    });
  } else {
    await insertGrant(db, {
      id: newId("gr"),
      workspaceId,
      env,
      toolId,
      personId,
      kind: "grant",
      startsAt: at,
      endsAt: null,
      revokedAt: null,
      note: null,
      createdAt: at,
    });
  }
}

async function kindsOf(db: Db, personId: string): Promise<number> {
  const row = await db.selectFrom("people").select("source_kinds").where("id", "=", personId).executeTakeFirstOrThrow();
  return Number(row.source_kinds);
}

async function sourceCounts(db: Db, scope: ToolScope, email: string) {
  const found = await findPersonWithSources(db, { scope, email });
  assert.ok(found, `no person for ${email}`);
  const { licences, subscriptions, grants } = found.sources;
  return [licences.length, subscriptions.length, grants.length];
}

for (const dialect of DIALECTS) {
  describe(`which kinds of source a person has (${dialect})`, () => {
    test("migration 011 marks the sources written before it, and retrieve still finds every one", async (t) => {
      const storage = await emptyStorage(dialect);
      t.after(() => storage.close());
      const { db } = storage;
      const clock = new ManualClock();
      await migrateThrough(db, "010-delivery-fillfactor");
      const scope = await seedScope(db, clock);
      const people: Record<string, string> = {};
      // Written as that schema's code wrote people: today's store also writes the search index of a later migration (027).
      for (const name of ["licence", "subscription", "grant", "all", "none"]) {
        const id = newId("psn");
        const email = `${name}@example.com`;
        await db
          .insertInto("people")
          .values({ id, workspace_id: scope.workspaceId, env: scope.env, email, email_norm: email, signed_in_at: null, created_at: clock.now() })
          .execute();
        people[name] = id;
      }
      const id = (name: string) => people[name] as string;
      for (const kind of ["licence", "subscription", "grant"] as const) {
        await addSource(db, scope, id(kind), kind, clock.now(), "before-011");
        await addSource(db, scope, id("all"), kind, clock.now(), "before-011");
      }

      await migrateToLatest(db, dialect);

      assert.deepEqual(await Promise.all(["licence", "subscription", "grant", "all", "none"].map((name) => kindsOf(db, id(name)))), [1, 2, 4, 7, 0]);
      assert.deepEqual(await sourceCounts(db, scope, "all@example.com"), [1, 1, 1]);
      assert.deepEqual(await sourceCounts(db, scope, "grant@example.com"), [0, 0, 1]);
      assert.deepEqual(await sourceCounts(db, scope, "none@example.com"), [0, 0, 0]);
    });

    test("a source written after the migration marks its person in the same transaction; a second one leaves the bits as they are", async (t) => {
      const storage = await emptyStorage(dialect);
      t.after(() => storage.close());
      const { db } = storage;
      const clock = new ManualClock();
      await migrateToLatest(db, dialect);
      const scope = await seedScope(db, clock);
      const person = await ensurePerson(db, scope.workspaceId, scope.env, "late@example.com", clock.now());
      assert.equal(await kindsOf(db, person.id), 0);

      // Rolled back with the source: the bit is written by the inserting transaction.
      await assert.rejects(
        db.transaction().execute(async (trx) => {
          await addSource(trx as unknown as Db, scope, person.id, "subscription", clock.now());
          throw new Error("roll back");
        }),
        /roll back/,
      );
      assert.equal(await kindsOf(db, person.id), 0);

      await addSource(db, scope, person.id, "grant", clock.now());
      assert.equal(await kindsOf(db, person.id), 4);
      assert.deepEqual(await sourceCounts(db, scope, "late@example.com"), [0, 0, 1]);
      await addSource(db, scope, person.id, "licence", clock.now());
      await addSource(db, scope, person.id, "grant", clock.now());
      assert.equal(await kindsOf(db, person.id), 5);
      assert.deepEqual(await sourceCounts(db, scope, "late@example.com"), [1, 0, 2]);
    });
  });
}
