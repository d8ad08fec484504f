// What the Manage page shows a signed-in person, read through the client API's own use
// cases (purchases with their keys, a team purchase's seats, devices, the tool's meters),
// with their trials and grants, the names the vendor gave their tools, bundles and plans,
// and whether Stripe bills for the workspace environment (then the person cancels,
// resumes and reaches the billing portal here).
import type { Static } from "@sinclair/typebox";
import type { Device, Purchase, SeatList } from "../client/client.schema.js";
import { listDevices } from "../client/client.service.js";
import type { PersonScope } from "../client/device-session.store.js";
import { listPurchases, listTeamSeats } from "../client/purchase.service.js";
import type { Env } from "../db/schema.js";
import type { Grant } from "../grants/grant.schema.js";
import { presentGrant } from "../grants/grant.service.js";
import { listGrantsOfPeople, type StoredGrant } from "../grants/grant.store.js";
import type { ProcessorName } from "../payments/payment-processor.js";
import { processorOf } from "../payments/processors.js";
import type { Services } from "../services.js";
import type { MeterUsage } from "../usage/usage.schema.js";
import { listDeviceUsage } from "../usage/usage.service.js";
import type { PageNames } from "../workspaces/translated-names.service.js";
import { listBundles, listPlans, listTools } from "../workspaces/workspace.service.js";
import type { Plan, Tool, Workspace } from "../workspaces/workspace.types.js";
import { listOffers } from "./plans.service.js";

export interface ManagedPurchase extends Purchase {
  productName: string;
  planDetails: Plan | null;
}

/** A trial or grant of the person, with its tool's name and, when it names one, its plan's. */
export interface ManagedGrant extends Grant {
  toolName: string;
  planName: string | null;
}

/** A meter of the page's tool as the person reads it through the client API, with its name. */
export interface ManagedMeter extends MeterUsage {
  name: string;
  /** The Plans page sells a pack that adds credits to it (and payments are taken). */
  packOnSale: boolean;
}

export interface ManageOverview {
  /** The meters the person has something of (an allowance, credits, or use this period); none for a licence key's session. */
  meters: ManagedMeter[];
  licences: ManagedPurchase[];
  subscriptions: ManagedPurchase[];
  /** Trials and grants of any tool of the workspace environment, running ones first, then newest first; none for a licence key's session. */
  grants: ManagedGrant[];
  /** The seats of each team purchase the person bought, by its id. */
  teams: Map<string, Static<typeof SeatList>>;
  devices: Static<typeof Device>[];
  /** Whether Warden can act at the workspace environment's processor (its API key is connected): cancel, resume and the billing portal go through it. */
  billingAtProcessor: boolean;
  /** The environment's processor, whose billing portal the page's form leads to. */
  processor: ProcessorName;
}

/**
 * `deviceId` is the device the page was opened from (its page ticket's), marked current
 * among the devices; null when the browser signed in by code. `names`: the vendor's names
 * in the page's language.
 */
export async function manageOverview(
  services: Services,
  person: PersonScope,
  page: { workspace: Workspace; env: Env; tool: Tool },
  deviceId: string | null,
  names: PageNames,
): Promise<ManageOverview> {
  const { db } = services;
  const workspace = { workspace: person.workspaceSlug };
  const [purchases, devices, tools, bundles, plans, billing, usage, offers, grantsOf] = await Promise.all([
    listPurchases(services, person),
    listDevices(services, person, deviceId),
    listTools(db, workspace),
    listBundles(db, workspace),
    listPlans(db, workspace),
    processorOf(services, person).then(async (processor) => ({ name: processor.name, canAct: await processor.canAct(services, person) })),
    // A licence key proves the licence, not the person: their meters are not its to read (as in the client API).
    person.licenceId === null ? listDeviceUsage(services, person, page.tool.id) : { data: [] },
    listOffers(services, page, names),
    // A licence key proves the licence, not the person: the person's trials and grants are not its to read.
    person.licenceId === null ? listGrantsOfPeople(db, [person.personId]) : new Map<string, StoredGrant[]>(),
  ]);
  const packed = new Set(offers.takesPayments ? offers.packs.flatMap((o) => Object.keys(o.terms.credits)) : []);
  const meterNames = new Map(offers.meters.map((m) => [m.id, m.name]));
  const meters = usage.data
    .filter((m) => m.allowance > 0 || m.credits > 0 || m.used > 0)
    .map((m) => ({ ...m, name: meterNames.get(m.meter) ?? m.meter, packOnSale: packed.has(m.meter) }));
  const productNames = new Map<string, string>([
    ...tools.map((t) => [`tool:${t.id}`, names.product("tool", t.id, t.name)] as const),
    ...bundles.map((b) => [`bundle:${b.id}`, names.product("bundle", b.id, b.name)] as const),
  ]);
  const planOf = (productKind: string, productId: string, planId: string) => {
    const plan = plans.find((p) => p.productKind === productKind && p.productId === productId && p.id === planId);
    return plan ? { ...plan, name: names.plan(plan.productKind, plan.productId, plan.id, plan.name) } : null;
  };
  const named = purchases.data.map((p) => ({
    ...p,
    productName: productNames.get(`${p.product_kind}:${p.product}`) ?? p.product,
    planDetails: p.plan === null ? null : planOf(p.product_kind, p.product, p.plan),
  }));
  const now = services.clock.now();
  const toolNames = new Map(tools.map((t) => [t.id, names.product("tool", t.id, t.name)]));
  const grants = (grantsOf.get(person.personId) ?? [])
    .map((g) => ({
      ...presentGrant(g, now),
      toolName: toolNames.get(g.toolId) ?? g.toolId,
      planName: g.planId === null ? null : (planOf("tool", g.toolId, g.planId)?.name ?? g.planId),
    }))
    // Running first, then newest first; the id settles a tie, so the list does not change between views.
    .sort((a, b) => Number(b.live) - Number(a.live) || b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id));
  const teams = new Map<string, Static<typeof SeatList>>();
  // Only the buyer of a team purchase hands its seats out; a seat's holder sees it as a licence of their own.
  if (person.licenceId === null) {
    for (const p of named) if (p.seats !== null && p.team === null) teams.set(p.id, await listTeamSeats(services, person, p.id));
  }
  return {
    meters,
    licences: named.filter((p) => p.kind === "licence"),
    subscriptions: named.filter((p) => p.kind === "subscription"),
    grants,
    teams,
    devices: devices.data,
    billingAtProcessor: billing.canAct,
    processor: billing.name,
  };
}
