// What every change of a licence, subscription or dispute shares: one transaction under
// the workspace environment's payment lock, the time it happens at, and bringing the
// customers list of every tool the purchase covers up to date for everyone it touches.
import { syncCustomer, toolScope, toolsOfProduct } from "../customers/customer.service.js";
import type { Executor } from "../db/database.js";
import type { Env, ProductKind } from "../db/schema.js";
import type { Services } from "../services.js";
import { lockPeopleMeters } from "../usage/usage.store.js";
import { lockBilling } from "./billing-lock.store.js";

export interface BillingTx {
  trx: Executor;
  workspaceId: string;
  env: Env;
  /** The injected clock's time when the transaction began. */
  now: number;
}

/**
 * Runs `work` in a transaction holding the workspace environment's payment lock, then
 * wakes the delivery worker for the events it wrote (they commit with the change).
 */
export async function inBillingTransaction<T>(services: Services, scope: { workspaceId: string; env: Env }, work: (tx: BillingTx) => Promise<T>): Promise<T> {
  const result = await services.db.transaction().execute(async (trx) => {
    await lockBilling(trx, scope, services.dialect === "postgres");
    return work({ trx, workspaceId: scope.workspaceId, env: scope.env, now: services.clock.now() });
  });
  services.signals.wakeDelivery();
  return result;
}

/** Brings the customer rows of every tool the product covers up to date for these people. */
export async function syncHolders(tx: BillingTx, product: { productKind: ProductKind; productId: string }, personIds: readonly string[]): Promise<void> {
  const people = [...new Set(personIds)];
  if (people.length === 0) return;
  for (const toolId of await toolsOfProduct(tx.trx, tx.workspaceId, product.productKind, product.productId)) {
    const scope = toolScope(tx.workspaceId, tx.env, toolId);
    for (const personId of people) await syncCustomer(tx.trx, scope, personId, tx.now);
  }
}

/**
 * Takes the meters' locks of these people in every tool the product covers, as a spend
 * does: a change that takes away what pays for their spends (a licence suspended) then
 * commits after any spend already drawing on it, and every later spend reads the change.
 */
export async function holdHoldersSpends(tx: BillingTx, product: { productKind: ProductKind; productId: string }, personIds: readonly string[]): Promise<void> {
  const tools = await toolsOfProduct(tx.trx, tx.workspaceId, product.productKind, product.productId);
  await lockPeopleMeters(tx.trx, tx, tools, [...new Set(personIds)]);
}
