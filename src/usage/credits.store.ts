// SQL for the credits ledger (`meter_credits`): one row per pack bought (its licence's
// id), per hand adjustment that adds, and per hand removal (a negative amount, nothing
// remaining, so that the history shows it). What is available to spend: rows with
// something remaining, not expired, and either added by hand or of a licence that is
// active (a disputed pack's credits are held; a refunded one's were taken back).
import type { Selectable } from "kysely";
import { dialectOf, type Executor } from "../db/database.js";
import type { Env, MeterCreditsTable } from "../db/schema.js";

export interface CreditMeterKey {
  workspaceId: string;
  env: Env;
  personId: string;
  toolId: string;
  meterId: string;
}

export interface CreditRow extends CreditMeterKey {
  id: string;
  /** The pack's licence; null for a hand adjustment. */
  licenceId: string | null;
  /** Added (positive), or taken away by hand (negative). */
  amount: number;
  remaining: number;
  expiresAt: number | null;
  note: string | null;
  createdAt: number;
}

export async function insertCredits(ex: Executor, rows: readonly CreditRow[]): Promise<void> {
  if (rows.length === 0) return;
  await ex
    .insertInto("meter_credits")
    .values(
      rows.map((r) => ({
        id: r.id,
        workspace_id: r.workspaceId,
        env: r.env,
        person_id: r.personId,
        tool_id: r.toolId,
        meter_id: r.meterId,
        licence_id: r.licenceId,
        amount: r.amount,
        remaining: r.remaining,
        expires_at: r.expiresAt,
        note: r.note,
        created_at: r.createdAt,
      })),
    )
    .execute();
}

/** A refunded (or lost-dispute) pack: what is left of its credits is taken back; `amount` stays as history. */
export async function zeroLicenceCredits(ex: Executor, licenceId: string): Promise<void> {
  await ex.updateTable("meter_credits").set({ remaining: 0 }).where("licence_id", "=", licenceId).where("remaining", ">", 0).execute();
}

const toCredit = (r: Selectable<MeterCreditsTable>): CreditRow => ({
  id: r.id,
  workspaceId: r.workspace_id,
  env: r.env,
  personId: r.person_id,
  toolId: r.tool_id,
  meterId: r.meter_id,
  licenceId: r.licence_id,
  amount: Number(r.amount),
  remaining: Number(r.remaining),
  expiresAt: r.expires_at === null ? null : Number(r.expires_at),
  note: r.note,
  createdAt: Number(r.created_at),
});

/**
 * The rows a person could spend from now, in the order they are drawn: soonest-expiring
 * first (those that never expire last), then oldest. With `lock`, on PostgreSQL the rows
 * stay locked FOR UPDATE until the transaction ends (SQLite has one writer at a time).
 */
export async function listAvailableCredits(ex: Executor, key: CreditMeterKey, now: number, options: { lock?: boolean } = {}): Promise<CreditRow[]> {
  let query = ex
    .selectFrom("meter_credits")
    .selectAll()
    .where("workspace_id", "=", key.workspaceId)
    .where("env", "=", key.env)
    .where("person_id", "=", key.personId)
    .where("tool_id", "=", key.toolId)
    .where("meter_id", "=", key.meterId)
    .where("remaining", ">", 0)
    .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", now)]))
    .where((eb) => eb.or([eb("licence_id", "is", null), eb("licence_id", "in", eb.selectFrom("licences").select("id").where("status", "=", "active"))]));
  if (options.lock && dialectOf(ex) === "postgres") query = query.forUpdate();
  const rows = (await query.execute()).map(toCredit);
  // Sorted here: the engines put nulls at opposite ends.
  return rows.sort(
    (a, b) => (a.expiresAt ?? Number.POSITIVE_INFINITY) - (b.expiresAt ?? Number.POSITIVE_INFINITY) || a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1),
  );
}

export async function setCreditsRemaining(ex: Executor, id: string, remaining: number): Promise<void> {
  await ex.updateTable("meter_credits").set({ remaining }).where("id", "=", id).execute();
}

/** A person's ledger for one tool, every meter, newest first; at most `limit` rows. */
export async function listCreditLedger(
  ex: Executor,
  scope: { workspaceId: string; env: Env; toolId: string },
  personId: string,
  limit: number,
): Promise<CreditRow[]> {
  const rows = await ex
    .selectFrom("meter_credits")
    .selectAll()
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("person_id", "=", personId)
    .where("tool_id", "=", scope.toolId)
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .limit(limit)
    .execute();
  return rows.map(toCredit);
}

/**
 * What changes when a person's credits of a tool are added or taken back, not when they
 * are spent: how many ledger rows there are (a pack bought, an adjustment), and how many
 * of them belong to a pack whose licence does not count now (refunded, disputed).
 */
export async function creditsVersion(
  ex: Executor,
  scope: { workspaceId: string; env: Env; toolId: string },
  personId: string,
): Promise<{ rows: number; held: number }> {
  const row = await ex
    .selectFrom("meter_credits as c")
    .leftJoin("licences as l", "l.id", "c.licence_id")
    .select((eb) => [
      eb.fn.countAll<number | string>().as("rows"),
      eb.fn.sum<number | string | null>(eb.case().when("l.status", "<>", "active").then(1).else(0).end()).as("held"),
    ])
    .where("c.workspace_id", "=", scope.workspaceId)
    .where("c.env", "=", scope.env)
    .where("c.person_id", "=", personId)
    .where("c.tool_id", "=", scope.toolId)
    .executeTakeFirst();
  return { rows: Number(row?.rows ?? 0), held: Number(row?.held ?? 0) };
}
