import type { Selectable } from "kysely";
import { utcDayOf } from "../clock.js";
import type { Executor } from "../db/database.js";
import type { Env, LicencesTable, ProductKind } from "../db/schema.js";
import { bump, productScope, settleTrialOutcomes } from "../insights/rollup.store.js";

export type LicenceStatus = "active" | "suspended" | "revoked";

/**
 * What the vendor earns of a payment after the processor's fee and tax, and those two, in
 * the payment's currency's minor units, as the processor reports them (Paddle's
 * transaction `details.totals`): never worked out by Warden.
 */
export interface Earnings {
  earningsCents: number;
  feeCents: number | null;
  taxCents: number | null;
}

export interface Licence {
  id: string;
  workspaceId: string;
  env: Env;
  personId: string;
  productKind: ProductKind;
  productId: string;
  planId: string | null;
  status: LicenceStatus;
  purchasedAt: number;
  amountCents: number | null;
  currency: string | null;
  paymentIntent: string | null;
  checkoutSession: string | null;
  /** Where the processor reports it (Paddle); absent or null otherwise (Stripe, imports, a team's seats). */
  earnings?: Earnings | null;
  /** A team purchase when above 0: it entitles its buyer to nothing; its seats are licences. */
  seats: number | null;
  teamLicenceId: string | null;
  teamSubscriptionId: string | null;
  createdAt: number;
}

export async function insertLicence(ex: Executor, licence: Licence): Promise<void> {
  await insertLicences(ex, [licence]);
}

/** Several licences in one statement, in the order given (a team before its seats). */
export async function insertLicences(ex: Executor, licences: readonly Licence[]): Promise<void> {
  if (licences.length === 0) return;
  await ex
    .insertInto("licences")
    .values(
      licences.map((licence) => ({
        id: licence.id,
        workspace_id: licence.workspaceId,
        env: licence.env,
        person_id: licence.personId,
        product_kind: licence.productKind,
        product_id: licence.productId,
        plan_id: licence.planId,
        status: licence.status,
        purchased_at: licence.purchasedAt,
        amount_cents: licence.amountCents,
        currency: licence.currency,
        payment_intent: licence.paymentIntent,
        checkout_session: licence.checkoutSession,
        earnings_cents: licence.earnings?.earningsCents ?? null,
        fee_cents: licence.earnings?.feeCents ?? null,
        tax_cents: licence.earnings?.taxCents ?? null,
        seats: licence.seats,
        team_licence_id: licence.teamLicenceId,
        team_subscription_id: licence.teamSubscriptionId,
        created_at: licence.createdAt,
      })),
    )
    .execute();
  await bump(
    ex,
    licences.flatMap((l) => {
      if (l.amountCents === null || l.currency === null) return [];
      const figure = {
        workspaceId: l.workspaceId,
        env: l.env,
        day: utcDayOf(l.purchasedAt),
        scope: productScope(l.productKind, l.productId),
        currency: l.currency,
        planId: l.planId,
      };
      const earned = l.earnings ? [{ ...figure, metric: "earnings" as const, value: l.earnings.earningsCents }] : [];
      return [{ ...figure, metric: "gross_one_time" as const, value: l.amountCents }, ...earned];
    }),
  ); // A purchase may decide its buyer's trials.
  await settleTrialOutcomes(
    ex,
    licences.filter((l) => l.amountCents !== null),
  );
}

/** A licence as stored, with what only payments write. */
export interface StoredLicence extends Licence {
  /** When it was refunded in full (which revoked it); null otherwise. */
  refundedAt: number | null;
}

type LicenceRow = Selectable<LicencesTable>;

function toLicence(r: LicenceRow): StoredLicence {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    env: r.env,
    personId: r.person_id,
    productKind: r.product_kind,
    productId: r.product_id,
    planId: r.plan_id,
    status: r.status,
    purchasedAt: Number(r.purchased_at),
    amountCents: r.amount_cents === null ? null : Number(r.amount_cents),
    currency: r.currency,
    paymentIntent: r.payment_intent,
    checkoutSession: r.checkout_session,
    earnings:
      r.earnings_cents === null
        ? null
        : {
            earningsCents: Number(r.earnings_cents),
            feeCents: r.fee_cents === null ? null : Number(r.fee_cents),
            taxCents: r.tax_cents === null ? null : Number(r.tax_cents),
          },
    seats: r.seats === null ? null : Number(r.seats),
    teamLicenceId: r.team_licence_id,
    teamSubscriptionId: r.team_subscription_id,
    createdAt: Number(r.created_at),
    refundedAt: r.refunded_at === null ? null : Number(r.refunded_at),
  };
}

/**
 * A licence by id in any workspace: licence ids are unique across the service, so a
 * caller that must not reuse one needs to see other workspaces' too.
 */
export async function findLicenceById(ex: Executor, id: string): Promise<StoredLicence | null> {
  const r = await ex.selectFrom("licences").selectAll().where("id", "=", id).executeTakeFirst();
  return r ? toLicence(r) : null;
}

/** Licences by id in any workspace (see findLicenceById), those that exist. */
export async function findLicencesByIds(ex: Executor, ids: readonly string[]): Promise<Map<string, StoredLicence>> {
  if (ids.length === 0) return new Map();
  const rows = await ex.selectFrom("licences").selectAll().where("id", "in", ids).execute();
  return new Map(rows.map((r) => [r.id, toLicence(r)]));
}

type Scope = { workspaceId: string; env: Env };

/** The licences of these people in one workspace environment, by person. */
export async function listLicencesOfPeople(ex: Executor, scope: Scope, personIds: readonly string[]): Promise<Map<string, StoredLicence[]>> {
  const result = new Map<string, StoredLicence[]>();
  if (personIds.length === 0) return result;
  const rows = await ex
    .selectFrom("licences")
    .selectAll()
    .where("person_id", "in", personIds)
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .execute();
  for (const r of rows) {
    const list = result.get(r.person_id);
    if (list) list.push(toLicence(r));
    else result.set(r.person_id, [toLicence(r)]);
  }
  return result;
}

/** The licence a payment bought (not a seat: seats carry no payment). */
export async function findLicenceByPaymentIntent(ex: Executor, scope: Scope, paymentIntent: string): Promise<StoredLicence | null> {
  const r = await ex
    .selectFrom("licences")
    .selectAll()
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("payment_intent", "=", paymentIntent)
    .orderBy("created_at")
    .executeTakeFirst();
  return r ? toLicence(r) : null;
}

export async function findLicenceByCheckoutSession(ex: Executor, scope: Scope, checkoutSession: string): Promise<StoredLicence | null> {
  const r = await ex
    .selectFrom("licences")
    .selectAll()
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("checkout_session", "=", checkoutSession)
    .executeTakeFirst();
  return r ? toLicence(r) : null;
}

export async function setLicenceStatus(ex: Executor, id: string, status: LicenceStatus, refundedAt?: number): Promise<void> {
  await ex
    .updateTable("licences")
    .set(refundedAt === undefined ? { status } : { status, refunded_at: refundedAt })
    .where("id", "=", id)
    .execute();
}

/**
 * Keeps what has been refunded of a licence in all (at most its amount), and when (`at`,
 * the customer page's date of its refund), and answers what is new since the last refund
 * recorded: 0 for a repeated or older report.
 */
export async function recordLicenceRefund(ex: Executor, id: string, refundedCents: number, at: number): Promise<number> {
  const r = await ex.selectFrom("licences").select(["amount_cents", "refunded_cents"]).where("id", "=", id).executeTakeFirst();
  if (!r || r.amount_cents === null) return 0;
  const total = Math.min(refundedCents, Number(r.amount_cents));
  const added = total - Number(r.refunded_cents);
  if (added <= 0) return 0;
  await ex.updateTable("licences").set({ refunded_cents: total, last_refund_at: at }).where("id", "=", id).execute();
  return added;
}

export type Team = { teamLicenceId: string } | { teamSubscriptionId: string };

/** The seats of a team purchase that are handed out (not revoked), oldest first. */
export async function listSeats(ex: Executor, scope: Scope, team: Team): Promise<StoredLicence[]> {
  let query = ex.selectFrom("licences").selectAll().where("workspace_id", "=", scope.workspaceId).where("env", "=", scope.env).where("status", "!=", "revoked");
  query = "teamLicenceId" in team ? query.where("team_licence_id", "=", team.teamLicenceId) : query.where("team_subscription_id", "=", team.teamSubscriptionId);
  const rows = await query.orderBy("created_at").orderBy("id").execute();
  return rows.map(toLicence);
}

/** Seats in use of a team licence or team subscription: a revoked seat frees its place. */
export async function countSeats(
  ex: Executor,
  scope: { workspaceId: string; env: Env },
  team: { teamLicenceId: string } | { teamSubscriptionId: string },
): Promise<number> {
  let query = ex
    .selectFrom("licences")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("status", "!=", "revoked");
  query = "teamLicenceId" in team ? query.where("team_licence_id", "=", team.teamLicenceId) : query.where("team_subscription_id", "=", team.teamSubscriptionId);
  const row = await query.executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The licences a person holds in one workspace environment (bought, or seats handed to them), newest first. */
export async function listLicencesOfPerson(ex: Executor, scope: Scope, personId: string): Promise<StoredLicence[]> {
  const rows = await ex
    .selectFrom("licences")
    .selectAll()
    .where("person_id", "=", personId)
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .orderBy("purchased_at", "desc")
    .orderBy("id")
    .execute();
  return rows.map(toLicence);
}

/**
 * A workspace environment's licences, newest first, each with its holder's address: of one
 * person, of some products (a tool and the bundles that give it), or all; at most `limit`.
 */
export async function listLicences(
  ex: Executor,
  scope: Scope,
  filter: { personId?: string; products?: readonly { kind: ProductKind; id: string }[]; limit: number },
): Promise<(StoredLicence & { email: string })[]> {
  let query = ex
    .selectFrom("licences")
    .innerJoin("people", "people.id", "licences.person_id")
    .selectAll("licences")
    .select("people.email as holder_email")
    .where("licences.workspace_id", "=", scope.workspaceId)
    .where("licences.env", "=", scope.env);
  if (filter.personId !== undefined) query = query.where("licences.person_id", "=", filter.personId);
  const products = filter.products;
  if (products !== undefined) {
    if (products.length === 0) return [];
    query = query.where((eb) => eb.or(products.map((p) => eb.and([eb("licences.product_kind", "=", p.kind), eb("licences.product_id", "=", p.id)]))));
  }
  const rows = await query.orderBy("licences.purchased_at", "desc").orderBy("licences.id").limit(filter.limit).execute();
  return rows.map((r) => ({ ...toLicence(r), email: r.holder_email }));
}
