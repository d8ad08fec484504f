// A catalogue that sells usage, over seedCatalogue's: Tab Master declares features
// `export` and `sync` and the meter `summaries` (10 free a month); lifetime unlocks export
// with 100 summaries a month, monthly unlocks both with 500 a period, and `pack-1000` is a
// credit pack sold alone (1,000 summaries, lasting 365 days). The suite bundle's plan
// unlocks export in Tab Master with 200 a month.
import type { Services } from "../services.js";
import { addFeature, addMeter, setPlanTerms } from "../usage/terms.service.js";
import { createPlan } from "../workspaces/workspace.service.js";
import { seedCatalogue, type Workspace } from "./harness.js";

export async function seedUsageCatalogue(services: Services): Promise<Workspace> {
  const { db, clock } = services;
  const ws = await seedCatalogue(services);
  const tool = { workspace: ws.slug, tool: "tabmaster" };
  await addFeature(db, clock, { ...tool, id: "export", name: "Export" });
  await addFeature(db, clock, { ...tool, id: "sync", name: "Sync" });
  await addMeter(db, clock, { ...tool, id: "summaries", name: "Summaries", unit: "summaries", freeAllowance: 10 });
  await setPlanTerms(db, clock, { ...tool, id: "lifetime", features: ["export"], allowances: { summaries: 100 } });
  await setPlanTerms(db, clock, { ...tool, id: "monthly", features: ["export", "sync"], allowances: { summaries: 500 } });
  await createPlan(db, clock, { ...tool, id: "pack-1000", name: "1,000 summaries", billing: "one_time", amountCents: 900, givesAccess: false });
  await setPlanTerms(db, clock, { ...tool, id: "pack-1000", credits: { summaries: 1000 }, creditsExpireDays: 365 });
  await setPlanTerms(db, clock, {
    workspace: ws.slug,
    bundle: "suite",
    id: "suite-lifetime",
    forTool: "tabmaster",
    features: ["export"],
    allowances: { summaries: 200 },
  });
  return ws;
}
