// What a plan's links to a processor's prices and products share, Stripe's
// (stripe/stripe-plan-link.service.ts, one set per workspace) and Paddle's
// (paddle/paddle-plan-link.service.ts, one per environment): the ids checked against the
// processor's shape, linked and unlinked in one transaction with an id held by another
// plan refused, and the one plan a purchase's items map to. Each processor keeps its
// own table (its store) and its own ids' shapes.
import type { Executor } from "../db/database.js";
import { invalidParameter } from "../errors/errors.js";
import type { Problem } from "./fields.js";
import type { BoughtItem, LinkedPlan } from "./payment-facts.js";

/** One kind of id a processor links: its CLI option, its shape and an example for the refusal. */
export interface LinkIdKind {
  param: string;
  shape: RegExp;
  example: string;
}

/** The ids to add, each trimmed and checked against its kind's shape; "stripe-price must be a Stripe id such as …". */
export function checkedIds(processor: string, kind: LinkIdKind, values: readonly string[] | undefined): string[] {
  return (values ?? []).map((raw) => {
    const value = raw.trim();
    if (!kind.shape.test(value)) throw invalidParameter(kind.param, `${kind.param} must be a ${processor} id such as ${kind.example}.`);
    return value;
  });
}

/** A processor's link table, seen from one plan (and for Paddle one environment). */
export interface PlanLinkTable {
  /** False when another plan holds the id already. */
  link(trx: Executor, id: string): Promise<boolean>;
  unlink(trx: Executor, id: string): Promise<unknown>;
  /** The plan holding the id, for the refusal. */
  holder(trx: Executor, id: string): Promise<LinkedPlan | undefined>;
}

/** Unlinks then links, in the caller's transaction; an id another plan holds refuses the whole change. */
export async function changePlanLinks(
  trx: Executor,
  table: PlanLinkTable,
  change: { added: readonly string[]; remove: readonly string[] | undefined; paramOf: (id: string) => string },
): Promise<{ changed: boolean }> {
  const removed = (change.remove ?? []).map((id) => id.trim()).filter((id) => id !== "");
  for (const id of removed) await table.unlink(trx, id);
  for (const id of change.added) {
    if (!(await table.link(trx, id))) {
      const other = await table.holder(trx, id);
      throw invalidParameter(
        change.paramOf(id),
        `${id} is linked to plan ${other?.planId ?? "?"} of ${other?.productKind ?? "?"} ${other?.productId ?? "?"} already; unlink it there first.`,
      );
    }
  }
  return { changed: removed.length > 0 || change.added.length > 0 };
}

/** Every id an item names (its price, its product), for one read of the links. */
export const idsOfItems = (items: readonly BoughtItem[]): string[] => items.flatMap((i) => [i.price, i.product]).filter((id): id is string => id !== null);

/**
 * The one plan every item maps to (by its price, else its product), or why there is none:
 * an item linked to no plan, or items linked to different plans.
 */
export function onePlanOfItems(items: readonly BoughtItem[], links: ReadonlyMap<string, LinkedPlan>): LinkedPlan | Problem {
  if (items.length === 0) return { problem: "no items to map" };
  const plans = new Map<string, LinkedPlan>();
  for (const item of items) {
    const plan = (item.price === null ? undefined : links.get(item.price)) ?? (item.product === null ? undefined : links.get(item.product));
    if (!plan) return { problem: `price ${item.price ?? "?"} (product ${item.product ?? "?"}) is linked to no plan` };
    plans.set(`${plan.productKind}:${plan.productId}:${plan.planId}`, plan);
  }
  if (plans.size > 1) return { problem: `its items map to ${plans.size} different plans` };
  return [...plans.values()][0] as LinkedPlan;
}
