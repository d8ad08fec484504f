// What the hosted Plans page offers for a tool: its own plans and those of every bundle
// that gives it, each with its price, billing and what it gives; retired plans and plans
// without a price are not offered (checkout refuses them too). Whether the environment
// takes payments at all (its processor's API key is connected) is part of the answer, so the
// page can say so before anyone chooses. Each offer carries its plan's terms for the
// tool (features, allowances, credits: usage/terms.service.ts), and an offer that adds
// credits is a credit pack, listed apart. Names are the vendor's in the page's language
// where given (workspaces/translated-names.service.ts), else as written. Nothing here
// grows with the number of customers: a handful of catalogue rows, by index.
import type { Env, ProductKind } from "../db/schema.js";
import type { ProcessorName } from "../payments/payment-processor.js";
import { processorOf } from "../payments/processors.js";
import type { Services } from "../services.js";
import { readToolSoldTerms } from "../usage/terms.service.js";
import type { Feature, Meter, PlanTerms } from "../usage/usage.types.js";
import { DEFAULT_NAMES, type PageNames } from "../workspaces/translated-names.service.js";
import { listBundles, listPlans, listTools } from "../workspaces/workspace.store.js";
import type { Plan, Tool, Workspace } from "../workspaces/workspace.types.js";

export interface Offer {
  productKind: ProductKind;
  productId: string;
  /** The tool's name, or the bundle's. */
  productName: string;
  plan: Plan & { amountCents: number };
  /** The names of the tools it gives: the tool alone, or the bundle's tools; none for a credit pack sold alone. */
  gives: string[];
  /** What the plan gives this tool: features, allowances per period, credits per purchase. */
  terms: PlanTerms;
  /** The tool's own default plan (a bundle's default is the bundle's, not the tool's): listed first, marked Recommended. */
  recommended: boolean;
}

export interface Offers {
  offers: Offer[];
  /** Offers whose terms add credits to a meter of the tool: bought again and again. */
  packs: Offer[];
  /** What the tool declares: the names and units the terms' ids stand for. */
  features: Feature[];
  meters: Meter[];
  /** Days of the tool's trial (0: none). */
  trialDays: number;
  /** False when the environment's processor has no API key: nothing can be bought yet. */
  takesPayments: boolean;
  /** The environment's processor: where its checkout page lives. */
  processor: ProcessorName;
}

const offered = (plan: Plan): plan is Plan & { amountCents: number } => plan.retiredAt === null && plan.amountCents !== null;

export async function listOffers(services: Services, scope: { workspace: Workspace; env: Env; tool: Tool }, names: PageNames = DEFAULT_NAMES): Promise<Offers> {
  const { db } = services;
  const { workspace, env, tool } = scope;
  const processor = await processorOf(services, { workspaceId: workspace.id, env });
  const [plans, bundles, tools, takesPayments, sold] = await Promise.all([
    listPlans(db, workspace.id, null),
    listBundles(db, workspace.id),
    listTools(db, workspace.id),
    processor.canAct(services, { workspaceId: workspace.id, env }),
    readToolSoldTerms(db, { workspaceId: workspace.id, toolId: tool.id }),
  ]);
  const toolName = new Map(tools.map((t) => [t.id, names.product("tool", t.id, t.name)]));
  const giving = bundles.filter((b) => b.toolIds.includes(tool.id));
  const all: Offer[] = [];
  const offer = (productKind: ProductKind, productId: string, productName: string, plan: Offer["plan"], gives: string[]) => {
    const terms = sold.termsOf({ productKind, productId, planId: plan.id });
    const named = { ...plan, name: names.plan(productKind, productId, plan.id, plan.name) };
    all.push({
      productKind,
      productId,
      productName,
      plan: named,
      gives: plan.givesAccess ? gives : [],
      terms,
      recommended: productKind === "tool" && plan.isDefault,
    });
  };
  const toolPlans = plans.filter((p) => p.productKind === "tool" && p.productId === tool.id).filter(offered);
  // The tool's default plan comes first (the page marks it Recommended); the rest keep their order.
  for (const plan of [...toolPlans.filter((p) => p.isDefault), ...toolPlans.filter((p) => !p.isDefault)]) {
    const name = names.product("tool", tool.id, tool.name);
    offer("tool", tool.id, name, plan, [name]);
  }
  for (const bundle of giving) {
    for (const plan of plans.filter((p) => p.productKind === "bundle" && p.productId === bundle.id).filter(offered)) {
      offer(
        "bundle",
        bundle.id,
        names.product("bundle", bundle.id, bundle.name),
        plan,
        bundle.toolIds.map((id) => toolName.get(id) ?? id),
      );
    }
  }
  const isPack = (o: Offer) => Object.keys(o.terms.credits).length > 0;
  return {
    offers: all.filter((o) => !isPack(o)),
    packs: all.filter(isPack),
    features: sold.features.map((f) => ({ ...f, name: names.feature(tool.id, f.id, f.name) })),
    meters: sold.meters.map((m) => ({ ...m, name: names.meter(tool.id, m.id, m.name) })),
    trialDays: tool.trialDays,
    takesPayments,
    processor: processor.name,
  };
}

/** An offer as a link or a form names it: a plan, and the bundle when it is a bundle's. */
export interface OfferChoice {
  plan: string;
  bundle: string | null;
}

export function findOffer(offers: Offers, choice: OfferChoice): Offer | null {
  const matches = (offer: Offer) =>
    offer.plan.id === choice.plan && (offer.productKind === "bundle" ? choice.bundle === offer.productId : choice.bundle === null);
  return offers.offers.find(matches) ?? offers.packs.find(matches) ?? null;
}
