// Credits (issue 46): what a person can spend of a meter beyond their allowances. A credit
// pack bought adds its rows in the purchase's transaction (`addPackCreditsIn`, called by
// billing); a vendor adds or removes credits by hand with a note (the vendor API,
// `warden admin credits`). A removal draws from what is available as a spend would
// (soonest-expiring first, then oldest), never below zero, and stays in the ledger as a
// row of its own.
import { recordOwnerAction } from "../audit/audit.service.js";
import { DAY_MS, toIso } from "../clock.js";
import { recordAccessChanges } from "../customers/access-change.store.js";
import { requireToolScope, toolScope, toolsOfProduct } from "../customers/customer.service.js";
import type { ToolScope } from "../customers/customer.store.js";
import { isEmailShape } from "../customers/email.js";
import { ensurePerson, findPersonByEmail } from "../customers/person.store.js";
import { type Executor, holdWriteLock } from "../db/database.js";
import type { ProductKind } from "../db/schema.js";
import { invalidParameter, notFound } from "../errors/errors.js";
import { newId } from "../ids.js";
import type { RequestContext, Services } from "../services.js";
import { findTool } from "../workspaces/workspace.store.js";
import { requireEnv, requireWorkspace } from "../workspaces/workspace-lookup.service.js";
import { type CreditRow, insertCredits, listAvailableCredits, listCreditLedger, setCreditsRemaining } from "./credits.store.js";
import { findPlanTerms, listMeters } from "./terms.store.js";
import { lockMeter } from "./usage.store.js";
import type { PlanTerms } from "./usage.types.js";

/** At most this many credits added or removed by one adjustment. */
export const MAX_ADJUSTMENT = 1_000_000_000;
/** A hand adjustment's credits last at most this many days. */
export const MAX_EXPIRY_DAYS = 3650;
/** The ledger answers a person's newest rows for a tool, this many at most. */
export const LEDGER_ROWS = 1000;

/** A licence as the pack rule needs it. */
export interface PackPurchase {
  id: string;
  workspaceId: string;
  env: CreditRow["env"];
  personId: string;
  productKind: ProductKind;
  productId: string;
  planId: string | null;
  purchasedAt: number;
}

/**
 * The credit rows a licence's plan gives (a credit pack, or a plan that also gives some):
 * one per tool and meter its terms name, to the buyer (a team purchase's credits go to
 * the buyer, once, whatever its seats), lasting the terms' days from the purchase.
 * Pure, over each tool's terms of the plan: an import reads them once for many licences.
 */
export function packCreditRows(licence: PackPurchase, termsByTool: readonly { toolId: string; terms: PlanTerms }[], now: number): CreditRow[] {
  const rows: CreditRow[] = [];
  for (const { toolId, terms } of termsByTool) {
    for (const [meterId, credits] of Object.entries(terms.credits).sort(([a], [b]) => (a < b ? -1 : 1))) {
      if (!(credits > 0)) continue;
      rows.push({
        id: newId("cr"),
        workspaceId: licence.workspaceId,
        env: licence.env,
        personId: licence.personId,
        toolId,
        meterId,
        licenceId: licence.id,
        amount: credits,
        remaining: credits,
        expiresAt: terms.creditsExpireDays === null ? null : licence.purchasedAt + terms.creditsExpireDays * DAY_MS,
        note: null,
        createdAt: now,
      });
    }
  }
  return rows;
}

/** A licence's plan's credits (packCreditRows), added in the transaction that stores the licence, once per licence. */
export async function addPackCreditsIn(trx: Executor, licence: PackPurchase, now: number): Promise<CreditRow[]> {
  if (licence.planId === null) return [];
  const plan = { productKind: licence.productKind, productId: licence.productId, planId: licence.planId };
  const termsByTool = [];
  for (const toolId of await toolsOfProduct(trx, licence.workspaceId, licence.productKind, licence.productId)) {
    termsByTool.push({ toolId, terms: await findPlanTerms(trx, licence.workspaceId, plan, toolId) });
  }
  const rows = packCreditRows(licence, termsByTool, now);
  await insertCredits(trx, rows);
  if (rows.length > 0) await recordAccessChanges(trx, licence.workspaceId, licence.env, [licence.personId], now);
  return rows;
}

export interface CreditAdjustment {
  meter: string;
  /** Non-zero: above 0 adds, below 0 removes. */
  amount: number;
  note: string;
  /** Only when adding: the credits last this many days; absent: until spent. */
  expires_in_days?: number | undefined;
}

export interface AdjustedCredits {
  id: string;
  meter: string;
  amount: number;
  note: string;
  expires_at: string | null;
  created_at: string;
  /** What the person can spend of the meter now, after the change. */
  balance: number;
}

export interface CreditLedgerEntry {
  id: string;
  meter: string;
  amount: number;
  remaining: number;
  expires_at: string | null;
  source: "pack" | "adjustment";
  licence: string | null;
  note: string | null;
  created_at: string;
}

function presentEntry(row: CreditRow): CreditLedgerEntry {
  return {
    id: row.id,
    meter: row.meterId,
    amount: row.amount,
    remaining: row.remaining,
    expires_at: row.expiresAt === null ? null : toIso(row.expiresAt),
    source: row.licenceId === null ? "adjustment" : "pack",
    licence: row.licenceId,
    note: row.note,
    created_at: toIso(row.createdAt),
  };
}

function checkAdjustment(input: CreditAdjustment): { amount: number; note: string; expiresInDays: number | null } {
  const { amount } = input;
  if (!Number.isSafeInteger(amount) || amount === 0 || Math.abs(amount) > MAX_ADJUSTMENT) {
    throw invalidParameter(
      "amount",
      `amount must be a whole number from -${MAX_ADJUSTMENT} to ${MAX_ADJUSTMENT}, not 0: above 0 adds credits, below 0 removes them.`,
    );
  }
  const note = input.note.trim();
  if (note === "" || note.length > 200 || note.includes("\u0000")) throw invalidParameter("note", "note must be 1 to 200 characters: say why.");
  const days = input.expires_in_days ?? null;
  if (days !== null) {
    if (amount < 0) throw invalidParameter("expires_in_days", "expires_in_days applies to credits added; a removal has no expiry.");
    if (!Number.isSafeInteger(days) || days < 1 || days > MAX_EXPIRY_DAYS) {
      throw invalidParameter("expires_in_days", `expires_in_days must be a whole number from 1 to ${MAX_EXPIRY_DAYS}.`);
    }
  }
  return { amount, note, expiresInDays: days };
}

/**
 * Adds or removes credits by hand, in one transaction: the person of an unknown address is
 * made (account false) when adding; a removal of more than is available is refused with
 * nothing written. `audit` records the change (an owner's, in the audit log) in that transaction.
 */
async function adjust(
  services: Services,
  scope: ToolScope,
  email: string,
  input: CreditAdjustment,
  audit: (trx: Executor, subject: string, now: number) => Promise<void>,
): Promise<AdjustedCredits> {
  const { db, clock } = services;
  if (!isEmailShape(email)) throw invalidParameter("email", "email must be an email address such as person@example.com.");
  const { amount, note, expiresInDays } = checkAdjustment(input);
  const meters = await listMeters(db, scope.workspaceId, scope.toolId);
  if (!meters.some((m) => m.id === input.meter)) {
    throw invalidParameter(
      "meter",
      `Tool "${scope.toolId}" has no meter "${input.meter}"${meters.length === 0 ? "" : ` (its meters: ${meters.map((m) => m.id).join(", ")})`}.`,
    );
  }
  return db.transaction().execute(async (trx) => {
    // SQLite: one writer from the first read; PostgreSQL: the rows drawn from are locked below.
    await holdWriteLock(trx);
    const now = clock.now();
    const person = await ensurePerson(trx, scope.workspaceId, scope.env, email, now);
    const key = { workspaceId: scope.workspaceId, env: scope.env, personId: person.id, toolId: scope.toolId, meterId: input.meter };
    // The row every spend of this meter waits on: a removal and a spend never draw from the same credits at once.
    await lockMeter(trx, key);
    const available = await listAvailableCredits(trx, key, now, { lock: true });
    let balance = available.reduce((sum, r) => sum + r.remaining, 0);
    if (amount < 0) {
      const wanted = -amount;
      if (wanted > balance) {
        throw invalidParameter("amount", `Only ${balance} ${input.meter} credits are available to remove; nothing was removed.`);
      }
      let left = wanted;
      for (const row of available) {
        if (left === 0) break;
        const taken = Math.min(left, row.remaining);
        await setCreditsRemaining(trx, row.id, row.remaining - taken);
        left -= taken;
      }
    }
    const row: CreditRow = {
      ...key,
      id: newId("cr"),
      licenceId: null,
      amount,
      remaining: amount > 0 ? amount : 0,
      expiresAt: expiresInDays === null ? null : now + expiresInDays * DAY_MS,
      note,
      createdAt: now,
    };
    await insertCredits(trx, [row]);
    balance += amount;
    await recordAccessChanges(trx, scope.workspaceId, scope.env, [person.id], now);
    await audit(trx, row.id, now);
    return {
      id: row.id,
      meter: row.meterId,
      amount,
      note,
      expires_at: row.expiresAt === null ? null : toIso(row.expiresAt),
      created_at: toIso(now),
      balance,
    };
  });
}

async function ledger(services: Services, scope: ToolScope, email: string): Promise<{ data: CreditLedgerEntry[] }> {
  const person = await findPersonByEmail(services.db, scope.workspaceId, scope.env, email);
  if (!person) return { data: [] };
  return { data: (await listCreditLedger(services.db, scope, person.id, LEDGER_ROWS)).map(presentEntry) };
}

/** The vendor API's adjustment; one made by an owner (a context with an actor) is audited as credits.adjusted. */
export async function adjustCredits(ctx: RequestContext, toolId: string, email: string, input: CreditAdjustment): Promise<AdjustedCredits> {
  const scope = await requireToolScope(ctx, toolId);
  return adjust(ctx.services, scope, email, input, (trx, subject, now) => recordOwnerAction(trx, ctx, "credits.adjusted", subject, now));
}

/** The vendor API's ledger: an address Warden does not know has none. Counted as a lookup, like list grants. */
export async function listCredits(ctx: RequestContext, toolId: string, email: string): Promise<{ data: CreditLedgerEntry[] }> {
  const { db, clock, limits } = ctx.services;
  const scope = await requireToolScope(ctx, toolId);
  await limits.countLookup(db, ctx.principal, clock.now());
  return ledger(ctx.services, scope, email);
}

export interface CommandTarget {
  workspace: string;
  env: string;
  tool: string;
  email: string;
}

async function commandScope(services: Services, target: CommandTarget): Promise<ToolScope> {
  const workspace = await requireWorkspace(services.db, target.workspace);
  const env = requireEnv(target.env);
  if (!(await findTool(services.db, workspace.id, target.tool))) throw notFound(`No tool "${target.tool}" in workspace "${workspace.slug}".`);
  return toolScope(workspace.id, env, target.tool);
}

/** `warden admin credits add|remove`: the operator's adjustment (an operator is no owner: nothing to audit, as for the other admin commands). */
export async function adjustCreditsByCommand(services: Services, target: CommandTarget, input: CreditAdjustment): Promise<AdjustedCredits> {
  return adjust(services, await commandScope(services, target), target.email, input, async () => {});
}

/** `warden admin credits list`. */
export async function listCreditsByCommand(services: Services, target: CommandTarget): Promise<{ data: CreditLedgerEntry[] }> {
  return ledger(services, await commandScope(services, target), target.email);
}
