// Which product and plan a purchase is for, checked against the workspace's catalogue.
// An answer of `{ problem }` is an expected failure (a checkout Warden did not create, a
// plan removed since): the caller logs it and moves on.
import type { ProductKind } from "../db/schema.js";
import { bundleExists, findPlan, findTool } from "../workspaces/workspace.store.js";
import type { BillingTx } from "./billing.context.js";

export interface PurchaseTerms {
  productKind: ProductKind;
  productId: string;
  planId: string | null;
  /** Team purchase: seats to hand out; null for one person. */
  seats: number | null;
}

export async function resolvePurchase(
  tx: BillingTx,
  wanted: { productKind: ProductKind; productId: string; planId: string | null; seats: number | null },
  billing: "one_time" | "subscription",
): Promise<PurchaseTerms | { problem: string }> {
  const { productKind, productId } = wanted;
  const exists = productKind === "tool" ? (await findTool(tx.trx, tx.workspaceId, productId)) !== null : await bundleExists(tx.trx, tx.workspaceId, productId);
  if (!exists) return { problem: `no ${productKind} "${productId}" in this workspace` };
  if (wanted.planId !== null) {
    const plan = await findPlan(tx.trx, tx.workspaceId, productKind, productId, wanted.planId);
    if (!plan) return { problem: `no plan "${wanted.planId}" for ${productKind} "${productId}"` };
    if (plan.billing !== billing) return { problem: `plan "${wanted.planId}" is billed ${plan.billing}, not ${billing}` };
    return { productKind, productId, planId: plan.id, seats: wanted.seats };
  }
  // No plan named: the product's default plan when it is billed this way and still
  // offered, else none. A plan named is taken even when retired since: the checkout, or
  // the subscription renewing, was made while it was offered.
  const fallback = await findPlan(tx.trx, tx.workspaceId, productKind, productId, null);
  const offered = fallback !== null && fallback.retiredAt === null && fallback.billing === billing;
  return { productKind, productId, planId: offered ? fallback.id : null, seats: wanted.seats };
}
