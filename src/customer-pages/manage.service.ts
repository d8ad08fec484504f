// What the Manage page shows a signed-in person, read through the client API's own use
// cases (purchases with their keys, a team purchase's seats, devices), with the names the
// vendor gave their tools, bundles and plans, and whether Stripe bills for the workspace
// environment (then the person cancels, resumes and reaches the billing portal here).
import type { Static } from "@sinclair/typebox";
import type { Device, Purchase, SeatList } from "../client/client.schema.js";
import { listDevices } from "../client/client.service.js";
import type { PersonScope } from "../client/device-session.store.js";
import { listPurchases, listTeamSeats } from "../client/purchase.service.js";
import type { Services } from "../services.js";
import { canActAtStripe } from "../stripe/stripe-actions.js";
import { listBundles, listPlans, listTools } from "../workspaces/workspace.service.js";
import type { Plan } from "../workspaces/workspace.types.js";

export interface ManagedPurchase extends Purchase {
  productName: string;
  planDetails: Plan | null;
}

export interface ManageOverview {
  licences: ManagedPurchase[];
  subscriptions: ManagedPurchase[];
  /** The seats of each team purchase the person bought, by its id. */
  teams: Map<string, Static<typeof SeatList>>;
  devices: Static<typeof Device>[];
  /** Whether the workspace environment's Stripe secret key is connected: cancel, resume and the billing portal go through it. */
  billingAtStripe: boolean;
}

export async function manageOverview(services: Services, person: PersonScope): Promise<ManageOverview> {
  const { db } = services;
  const workspace = { workspace: person.workspaceSlug };
  const [purchases, devices, tools, bundles, plans, billingAtStripe] = await Promise.all([
    listPurchases(services, person),
    listDevices(services, person, null),
    listTools(db, workspace),
    listBundles(db, workspace),
    listPlans(db, workspace),
    canActAtStripe(services, person),
  ]);
  const productNames = new Map<string, string>([
    ...tools.map((t) => [`tool:${t.id}`, t.name] as const),
    ...bundles.map((b) => [`bundle:${b.id}`, b.name] as const),
  ]);
  const named = purchases.data.map((p) => ({
    ...p,
    productName: productNames.get(`${p.product_kind}:${p.product}`) ?? p.product,
    planDetails: plans.find((plan) => plan.productKind === p.product_kind && plan.productId === p.product && plan.id === p.plan) ?? null,
  }));
  const teams = new Map<string, Static<typeof SeatList>>();
  // Only the buyer of a team purchase hands its seats out; a seat's holder sees it as a licence of their own.
  if (person.licenceId === null) {
    for (const p of named) if (p.seats !== null && p.team === null) teams.set(p.id, await listTeamSeats(services, person, p.id));
  }
  return {
    licences: named.filter((p) => p.kind === "licence"),
    subscriptions: named.filter((p) => p.kind === "subscription"),
    teams,
    devices: devices.data,
    billingAtStripe,
  };
}
