// A bundle's tools changed after it was sold: who gains and who loses access, counted
// before anything changes, then applied with the customer lists kept true. Buyers come
// through Stripe's signed events as in production; both engines.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DIALECTS } from "../test-support/harness.js";
import { connectTestStripe, deliver, paymentSession, paymentsTestbed, stripeEvent } from "../test-support/stripe.js";
import { changeBundleTools } from "./bundle.service.js";
import { listBundles } from "./workspace.service.js";

type Testbed = Awaited<ReturnType<typeof paymentsTestbed>>;

async function buySuite(t: Testbed, email: string, live = false, liveSecret = "") {
  const session = paymentSession({ email, metadata: { warden_bundle: "suite", warden_plan: "suite-lifetime" }, amount: 9900, now: t.clock.now() });
  const event = stripeEvent("checkout.session.completed", session, { now: t.clock.now(), livemode: live });
  assert.equal(await deliver(t.api, t.ws, live ? liveSecret : t.secret, event, t.clock.now()), "applied");
}

/** Whether the API says `email` holds `tool` (test environment), and whether the entitled list shows them. */
async function holds(t: Testbed, email: string, tool: string): Promise<[boolean, boolean]> {
  const customer = await t.customer(email, tool);
  const listed = (await t.list(tool, "?entitled=true")).some((c) => c.email === email);
  return [customer.status === 200 && customer.body.entitled === true, listed];
}

for (const dialect of DIALECTS) {
  describe(`changing a bundle's tools (${dialect})`, () => {
    test("the consequence is counted per environment before anything changes; a tool held another way is not lost", async () => {
      const t = await paymentsTestbed(dialect);
      const liveSecret = await connectTestStripe(t.services, t.ws, "live");
      await buySuite(t, "ada@example.com");
      await buySuite(t, "grace@example.com");
      await buySuite(t, "bob@example.com", true, liveSecret);
      // Grace holds Link Keeper by a grant too: removing it from the bundle takes nothing from her.
      const grant = await t.api.request({
        method: "POST",
        url: "/api/v1/tools/linkkeeper/grants",
        key: t.ws.testKey,
        payload: { email: "grace@example.com", days: 30 },
      });
      assert.equal(grant.statusCode, 201, grant.body);

      const input = { workspace: t.ws.slug, id: "suite", toolIds: ["tabmaster", "notepad"] };
      const preview = await changeBundleTools(t.services, { ...input, apply: false });
      assert.deepEqual([preview.added, preview.removed, preview.applied], [["notepad"], ["linkkeeper"], false]);
      assert.deepEqual(
        preview.consequences.map((c) => [c.env, c.buyers, c.complete, c.gain.map((g) => [g.toolName, g.people]), c.lose.map((l) => [l.toolName, l.people])]),
        [
          ["live", 1, true, [["Notepad", 1]], [["Link Keeper", 1]]],
          ["test", 2, true, [["Notepad", 2]], [["Link Keeper", 1]]],
        ],
      );
      // Nothing changed.
      assert.deepEqual((await listBundles(t.services.db, { workspace: t.ws.slug })).find((b) => b.id === "suite")?.toolIds, ["linkkeeper", "tabmaster"]);
      assert.deepEqual(await holds(t, "ada@example.com", "linkkeeper"), [true, true]);
      assert.deepEqual(await holds(t, "ada@example.com", "notepad"), [false, false]);

      const applied = await changeBundleTools(t.services, { ...input, apply: true });
      assert.equal(applied.applied, true);
      assert.deepEqual(applied.consequences, preview.consequences, "applying does what the preview said");
      assert.deepEqual((await listBundles(t.services.db, { workspace: t.ws.slug })).find((b) => b.id === "suite")?.toolIds, ["notepad", "tabmaster"]);
      // Entitlement and the customer lists agree, at once.
      assert.deepEqual(await holds(t, "ada@example.com", "linkkeeper"), [false, false]);
      assert.deepEqual(await holds(t, "ada@example.com", "notepad"), [true, true]);
      assert.deepEqual(await holds(t, "grace@example.com", "linkkeeper"), [true, true]);
      assert.deepEqual(await holds(t, "grace@example.com", "notepad"), [true, true]);
      assert.deepEqual(await holds(t, "ada@example.com", "tabmaster"), [true, true]);
    });

    test("past the bound the counts are of the first buyers only, said as such; applying still brings every buyer's rows up to date", async () => {
      const t = await paymentsTestbed(dialect);
      for (const email of ["ada@example.com", "grace@example.com", "alan@example.com"]) await buySuite(t, email);
      const input = { workspace: t.ws.slug, id: "suite", toolIds: ["tabmaster", "linkkeeper", "notepad"], countUpTo: 2 };
      const preview = await changeBundleTools(t.services, { ...input, apply: false });
      const test = preview.consequences.find((c) => c.env === "test");
      assert.deepEqual([test?.buyers, test?.complete, test?.gain.map((g) => g.people)], [3, false, [2]]);
      await changeBundleTools(t.services, { ...input, apply: true });
      for (const email of ["ada@example.com", "grace@example.com", "alan@example.com"]) assert.deepEqual(await holds(t, email, "notepad"), [true, true], email);
    });

    test("refuses a change that names no tool, an unknown tool, the same tools or an unknown bundle, and changes nothing", async () => {
      const t = await paymentsTestbed(dialect);
      const base = { workspace: t.ws.slug, id: "suite", apply: true };
      const refusals: [Parameters<typeof changeBundleTools>[1], RegExp][] = [
        [{ ...base, toolIds: [" "] }, /A bundle names at least one tool/],
        [{ ...base, toolIds: ["tabmaster", "ghost"] }, /No tool "ghost" in this workspace/],
        [{ ...base, toolIds: ["linkkeeper", "tabmaster"] }, /names these tools already: nothing to change/],
        [{ ...base, id: "nope", toolIds: ["tabmaster"] }, /No bundle "nope"/],
      ];
      for (const [input, message] of refusals) await assert.rejects(changeBundleTools(t.services, input), message);
      assert.deepEqual((await listBundles(t.services.db, { workspace: t.ws.slug })).find((b) => b.id === "suite")?.toolIds, ["linkkeeper", "tabmaster"]);
    });
  });
}
