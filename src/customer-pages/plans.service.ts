// What the hosted Plans page offers for a tool: its own plans and those of every bundle
// that gives it, each with its price, billing and what it gives; retired plans and plans
// without a price are not offered (checkout refuses them too). Whether the environment
// takes payments at all (a Stripe secret key is connected) is part of the answer, so the
// page can say so before anyone chooses. Nothing here grows with the number of
// customers: a handful of catalogue rows, by index.
import type { Env, ProductKind } from "../db/schema.js";
import type { Services } from "../services.js";
import { findStripeAccount } from "../stripe/stripe-account.store.js";
import { listBundles, listPlans, listTools } from "../workspaces/workspace.store.js";
import type { Plan, Tool, Workspace } from "../workspaces/workspace.types.js";

export interface Offer {
  productKind: ProductKind;
  productId: string;
  /** The tool's name, or the bundle's. */
  productName: string;
  plan: Plan & { amountCents: number };
  /** The names of the tools it gives: the tool alone, or the bundle's tools. */
  gives: string[];
}

export interface Offers {
  offers: Offer[];
  /** Days of the tool's trial (0: none). */
  trialDays: number;
  /** False when the environment has no Stripe secret key: nothing can be bought yet. */
  takesPayments: boolean;
}

const offered = (plan: Plan): plan is Plan & { amountCents: number } => plan.retiredAt === null && plan.amountCents !== null;

export async function listOffers(services: Services, scope: { workspace: Workspace; env: Env; tool: Tool }): Promise<Offers> {
  const { db } = services;
  const { workspace, env, tool } = scope;
  const [plans, bundles, tools, account] = await Promise.all([
    listPlans(db, workspace.id, null),
    listBundles(db, workspace.id),
    listTools(db, workspace.id),
    findStripeAccount(db, workspace.id, env),
  ]);
  const toolName = new Map(tools.map((t) => [t.id, t.name]));
  const giving = bundles.filter((b) => b.toolIds.includes(tool.id));
  const offers: Offer[] = [];
  for (const plan of plans.filter((p) => p.productKind === "tool" && p.productId === tool.id).filter(offered)) {
    offers.push({ productKind: "tool", productId: tool.id, productName: tool.name, plan, gives: [tool.name] });
  }
  for (const bundle of giving) {
    for (const plan of plans.filter((p) => p.productKind === "bundle" && p.productId === bundle.id).filter(offered)) {
      offers.push({ productKind: "bundle", productId: bundle.id, productName: bundle.name, plan, gives: bundle.toolIds.map((id) => toolName.get(id) ?? id) });
    }
  }
  return { offers, trialDays: tool.trialDays, takesPayments: Boolean(account?.secretKeySealed) };
}

/** An offer as a link or a form names it: a plan, and the bundle when it is a bundle's. */
export interface OfferChoice {
  plan: string;
  bundle: string | null;
}

export function findOffer(offers: Offers, choice: OfferChoice): Offer | null {
  const matches = (offer: Offer) =>
    offer.plan.id === choice.plan && (offer.productKind === "bundle" ? choice.bundle === offer.productId : choice.bundle === null);
  return offers.offers.find(matches) ?? null;
}
