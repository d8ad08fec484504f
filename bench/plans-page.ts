// The hosted Plans page at a workspace's size (issue 32, "Speed"; not part of `npm run
// bench`): `--customers` customers seeded as scenario 1 seeds them (people, licences,
// subscriptions, grants, devices, list rows), the workspace branded (accent and logo)
// and connected to Stripe, then the page requested one at a time through the whole HTTP
// stack in this process (`inject`: routing, hooks, the page's reads, rendering), signed
// out and signed in, and timed. The page reads the catalogue, the branding, the Stripe
// account and the session, each by key: nothing it reads grows with the customers.
//
//   node --import tsx bench/plans-page.ts [--customers 1000000] [--requests 500] [--postgres]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { buildApp } from "../src/app.js";
import { systemClock } from "../src/clock.js";
import { parseConfig } from "../src/config.js";
import { updateBranding } from "../src/customer-pages/branding.service.js";
import { openCustomerSession } from "../src/customer-pages/customer-session.service.js";
import { createServices } from "../src/services.js";
import { connectStripe } from "../src/stripe/stripe-account.service.js";
import { BENCH } from "./customer-mix.js";
import { PG_URL, runOnPg } from "./engine-run.js";
import { seedCustomers, setUpWorkspace } from "./seed.js";

const { values } = parseArgs({
  options: {
    customers: { type: "string", default: "1000000" },
    requests: { type: "string", default: "500" },
    postgres: { type: "boolean", default: false },
  },
});
const customers = Number(values.customers);
const requests = Number(values.requests);

const dataDir = mkdtempSync(join(tmpdir(), "warden-plans-bench-"));
const schema = `bench_plans_${Date.now()}`;
if (values.postgres) await runOnPg(`create schema ${schema}`);
const config = parseConfig({
  WARDEN_DATA_DIR: dataDir,
  WARDEN_SECRET_KEY: "plans-page-bench-secret-0123456789abcdef",
  ...(values.postgres ? { DATABASE_URL: `${PG_URL}?options=-c%20search_path%3D${schema}` } : {}),
});
const services = await createServices(config, { clock: systemClock });
try {
  const storage = { db: services.db, dialect: services.dialect } as Parameters<typeof setUpWorkspace>[0];
  const ws = await setUpWorkspace(storage);
  const started = performance.now();
  await seedCustomers(storage, ws, { from: 0, to: customers, now: systemClock.now() }, (done) => {
    if (done % 100_000 === 0) console.log(`  seeded ${done.toLocaleString("en")} customers`);
  });
  console.log(`seeded ${customers.toLocaleString("en")} customers in ${((performance.now() - started) / 1000).toFixed(0)} s (${services.dialect})`);
  await connectStripe(services, {
    workspace: BENCH.workspace,
    env: "live",
    webhookSecret: "whsec_planspagebench0123",
    secretKey: "sk_live_planspagebench0123",
  });
  const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(20_000, 3)]);
  await updateBranding(services, { workspace: BENCH.workspace, accent: "#1f6f43", logo: png });
  // A signed-in person: one of the seeded customers.
  const person = await services.db.selectFrom("people").select("id").where("workspace_id", "=", ws.workspaceId).limit(1).executeTakeFirstOrThrow();
  const token = await services.db
    .transaction()
    .execute((trx) => openCustomerSession(trx, { workspaceId: ws.workspaceId, env: "live", personId: person.id, licenceId: null, now: systemClock.now() }));

  const app = await buildApp(services, { logger: false });
  await app.ready();
  const url = `/c/${BENCH.workspace}/live/${BENCH.tool}/plans`;
  const time = async (cookie: string | null) => {
    const ms: number[] = [];
    for (let i = 0; i < requests + 50; i++) {
      const t = performance.now();
      const response = await app.inject({ method: "GET", url, headers: cookie ? { cookie } : {} });
      if (response.statusCode !== 200 || !response.body.includes("Suite lifetime")) throw new Error(`plans page answered ${response.statusCode}`);
      if (i >= 50) ms.push(performance.now() - t);
    }
    ms.sort((a, b) => a - b);
    const at = (q: number) => (ms[Math.min(ms.length - 1, Math.floor(q * ms.length))] as number).toFixed(2);
    return `p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${at(1)} ms`;
  };
  console.log(`Plans page at ${customers.toLocaleString("en")} customers (${services.dialect}), ${requests} requests one at a time after 50 of warm-up:`);
  console.log(`  signed out: ${await time(null)}`);
  console.log(`  signed in:  ${await time(`warden_customer_${BENCH.workspace}_live=${token}`)}`);
  await app.close();
} finally {
  await services.close();
  rmSync(dataDir, { recursive: true, force: true });
  if (values.postgres) await runOnPg(`drop schema ${schema} cascade`);
}
