// SQL for the credits ledger (`meter_credits`): one row per pack bought (its licence's
// id), per hand adjustment that adds, and per hand removal (a negative amount, nothing
// remaining, so that the history shows it). What is available to spend: rows with
// something remaining, not expired, and either added by hand or of a licence that is
// active (a disputed pack's credits are held; a refunded one's were taken back).
import { type RawBuilder, type Selectable, sql } from "kysely";
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

/** Whose credits of which tool: values, or columns of the statement the version is part of. */
interface CreditsOwner {
  workspaceId: RawBuilder<string>;
  env: RawBuilder<string>;
  personId: RawBuilder<string>;
  toolId: RawBuilder<string>;
}

/**
 * What changes when a person's credits of a tool are added or taken back, not when they
 * are spent, as two columns of a statement: `credit_rows`, how many ledger rows there are
 * (a pack bought, an adjustment), and `credit_held`, how many of them belong to a pack
 * whose licence does not count now (refunded, disputed). A part of the access check's one
 * read (device-session.store.ts), so that it costs no round trip of its own.
 */
export function creditsVersionColumns(owner: CreditsOwner): RawBuilder<unknown> {
  const mine = sql`c.workspace_id = ${owner.workspaceId} and c.env = ${owner.env} and c.person_id = ${owner.personId} and c.tool_id = ${owner.toolId}`;
  return sql`(select count(*) from meter_credits as c where ${mine}) as credit_rows,
  (select count(*) from meter_credits as c join licences as l on l.id = c.licence_id where ${mine} and l.status <> 'active') as credit_held`;
}

/** The columns `creditsVersionColumns` adds to a row. */
export interface CreditsVersionColumns {
  credit_rows: number | string;
  credit_held: number | string;
}

export interface CreditsVersion {
  rows: number;
  held: number;
}

export const toCreditsVersion = (row: CreditsVersionColumns): CreditsVersion => ({ rows: Number(row.credit_rows), held: Number(row.credit_held) });

/** The version of the person's credits of the tool (creditsVersionColumns) on its own. */
export async function creditsVersion(ex: Executor, scope: { workspaceId: string; env: Env; toolId: string }, personId: string): Promise<CreditsVersion> {
  const columns = creditsVersionColumns({
    workspaceId: sql.val(scope.workspaceId),
    env: sql.val(scope.env),
    personId: sql.val(personId),
    toolId: sql.val(scope.toolId),
  });
  const { rows } = await sql<CreditsVersionColumns>`select ${columns}`.execute(ex);
  return toCreditsVersion(rows[0] as CreditsVersionColumns);
}
