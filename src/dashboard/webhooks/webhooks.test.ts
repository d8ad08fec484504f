import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Webhook } from "standardwebhooks";
import { dashboardApp, dashboardServices, readCode, TestBrowser } from "../../test-support/dashboard.js";
import { DIALECTS, seedWorkspace } from "../../test-support/harness.js";
import { answer, startReceiver, testWorker } from "../../test-support/webhooks.js";

const SECRET = /whsec_[A-Za-z0-9+/=]+/g;
const endpointIdOf = (body: string) => /\/webhooks\/(ep_\w{24})"/.exec(body)?.[1];

/** Adds an endpoint through the form: the POST redirects to the one page that shows its secret. */
async function addThroughForm(browser: TestBrowser, list: string, fields: Record<string, string>) {
  const posted = await browser.post(list, fields);
  assert.equal(posted.statusCode, 303, posted.body);
  assert.equal(posted.body.match(SECRET), null, "the secret is not in the redirect");
  const location = String(posted.headers.location);
  assert.match(location, /\/webhooks\/ep_\w{24}\/new-secret\/once_\w{32}$/);
  const shown = await browser.get(location);
  assert.equal(shown.statusCode, 200);
  return { location, body: shown.body };
}

for (const dialect of DIALECTS) {
  describe(`dashboard webhooks (${dialect})`, () => {
    test("add an endpoint (secret shown once), send a test event through the real delivery path, see the attempt, resend", async () => {
      const env = await dashboardServices(dialect, { WARDEN_LIMIT_EXAMPLE_EVENTS_PER_DAY: "2" });
      env.clock.set(Date.now());
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const receiver = await startReceiver(answer(200, "<script>alert('receiver')</script> thanks"));
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const list = `/dashboard/w/${ws.slug}/test/webhooks`;
      assert.match((await browser.get(list)).body, /No test endpoints yet/);

      const url = `${receiver.url}?a=1&b=2`;
      const added = await addThroughForm(browser, list, { url, "event:payment.disputed": "1", "event:subscription.cancelled": "1" });
      const [secret] = added.body.match(SECRET) ?? [];
      assert.ok(secret, "the secret is on the page the POST redirects to");
      assert.match(added.body, /data-copy="secret"/, "with a Copy button");
      const id = endpointIdOf(added.body);
      assert.ok(id);
      const reloaded = await browser.get(added.location);
      assert.equal(reloaded.statusCode, 404, "a reload shows it no more");
      assert.equal(reloaded.body.match(SECRET), null);

      const listed = await browser.get(list);
      assert.equal(listed.body.match(SECRET), null, "and never again on a GET");
      assert.ok(listed.body.includes(`${receiver.url}?a=1&amp;b=2`), "the URL escaped");
      assert.match(listed.body, /<code>subscription\.cancelled<\/code> <code>payment\.disputed<\/code>/);
      assert.match(listed.body, /badge-ok">Enabled/);

      const page = `${list}/${id}`;
      assert.match((await browser.get(page)).body, /0 of 2 today/);
      const sent = await browser.post(`${page}/test`, { type: "payment.disputed" });
      assert.equal(sent.statusCode, 303);
      const eventId = /sent=(evt_\w+)/.exec(String(sent.headers.location))?.[1];
      assert.ok(eventId);
      await testWorker(env.services).drain();
      assert.equal(receiver.received.length, 1);
      assert.equal(JSON.parse(receiver.received[0]?.body.toString() ?? "{}").id, eventId, "the example went through the real delivery path");
      const after = await browser.get(String(sent.headers.location));
      assert.match(after.body, /1 of 2 today/);
      // Named by its type, linked to its page (names before ids).
      assert.ok(
        after.body.includes(`Test event <a href="/dashboard/w/${ws.slug}/test/events/${eventId}"><code>payment.disputed</code></a> sent to this endpoint only`),
      );
      const deliveryId = /\/webhooks\/deliveries\/(dlv_\w+)"/.exec(after.body)?.[1];
      assert.ok(deliveryId, "the endpoint's page lists its delivery");

      const delivery = `${list}/deliveries/${deliveryId}`;
      const shown = await browser.get(delivery);
      assert.match(shown.body, /HTTP 200/);
      assert.ok(shown.body.includes("&lt;script&gt;alert(&#39;receiver&#39;)&lt;/script&gt; thanks"), "the receiver's answer, escaped");
      assert.ok(!shown.body.includes("<script>"), "no markup of the receiver's");

      const resent = await browser.post(`${delivery}/resend`);
      assert.equal(resent.statusCode, 303);
      assert.equal(resent.headers.location, `${delivery}?resent=1`);
      await testWorker(env.services).drain();
      assert.equal(receiver.received.length, 2);
      assert.deepEqual(new Set(receiver.ids()).size, 1, "the same webhook-id");
      const twice = await browser.get(`${delivery}?resent=1`);
      assert.match(twice.body, /Attempt 2<\/strong> <span class="badge badge-pending">Resent/);

      // The day's example events run out: the button is off and the use case refuses.
      await browser.post(`${page}/test`, { type: "payment.disputed" });
      const spent = await browser.get(page);
      assert.match(spent.body, /2 of 2 today/);
      assert.match(spent.body, /Send test event<\/button>/);
      assert.match(spent.body, /type="submit" disabled>Send test event/);
      assert.equal((await browser.post(`${page}/test`, { type: "payment.disputed" })).statusCode, 429);

      const audit = await browser.get("/dashboard/audit");
      for (const what of ["Added a webhook endpoint", "Sent a test event", "Resent a delivery"]) assert.ok(audit.body.includes(what), what);
    });

    test("rotating the secret needs a fresh code, shows the new secret once, and deliveries carry both signatures for 24 hours", async () => {
      const env = await dashboardServices(dialect);
      env.clock.set(Date.now());
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const receiver = await startReceiver();
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const list = `/dashboard/w/${ws.slug}/test/webhooks`;
      await browser.get(list);
      const added = await addThroughForm(browser, list, { url: receiver.url });
      const [old] = added.body.match(SECRET) ?? [];
      const id = endpointIdOf(added.body);
      assert.ok(old && id);
      const page = `${list}/${id}`;
      assert.doesNotMatch((await browser.get(page)).body, /Rotating/);

      // Without the form's token, or from another site, nothing is mailed and nothing rotates.
      assert.equal((await browser.post(`${page}/secret/rotate`, { _csrf: "0".repeat(64) })).statusCode, 403);
      assert.equal((await browser.post(`${page}/secret/rotate`, {}, { "sec-fetch-site": "cross-site" })).statusCode, 403);
      const signInCode = await readCode(env.dataDir, ws.ownerEmail);
      const asked = await browser.post(`${page}/secret/rotate`);
      assert.equal(asked.statusCode, 200);
      assert.match(asked.body, /Confirm it is you/);
      assert.match(asked.body, /the old one keeps signing beside it for 24 hours/);
      assert.equal(asked.body.match(SECRET), null);
      const code = await readCode(env.dataDir, ws.ownerEmail);
      assert.notEqual(code, signInCode);
      const wrong = await browser.post(`${page}/secret/rotate`, { confirm: "1", code: code === "000000" ? "111111" : "000000" });
      assert.equal(wrong.statusCode, 400);
      const unchanged = await env.services.db.selectFrom("webhook_endpoints").select("secret_sealed").where("id", "=", id).executeTakeFirstOrThrow();
      assert.equal(env.services.secretBox.open(unchanged.secret_sealed), old, "a wrong code rotates nothing");

      const posted = await browser.post(`${page}/secret/rotate`, { confirm: "1", code });
      assert.equal(posted.statusCode, 303);
      assert.equal(posted.body.match(SECRET), null);
      const rotated = await browser.get(String(posted.headers.location));
      assert.equal(rotated.statusCode, 200);
      const [secret, ...more] = rotated.body.match(SECRET) ?? [];
      assert.ok(secret && more.length === 0, "the new secret alone is on the page the POST redirects to");
      assert.equal((await browser.get(String(posted.headers.location))).statusCode, 404, "once");
      assert.notEqual(secret, old);
      assert.match(rotated.body, /Copy the new signing secret now/);
      assert.equal((await browser.post(`${page}/secret/rotate`, { confirm: "1", code })).statusCode, 400, "the code is spent");

      const shown = await browser.get(page);
      assert.equal(shown.body.match(SECRET), null, "never on a GET");
      assert.match(shown.body, /badge-pending">Rotating<\/span> <span class="state-note">the old secret also signs until/);
      await browser.post(`${page}/test`, { type: "payment.refunded" });
      await testWorker(env.services).drain();
      const [delivery] = receiver.received;
      assert.ok(delivery);
      const headers = Object.fromEntries(["webhook-id", "webhook-timestamp", "webhook-signature"].map((h) => [h, String(delivery.headers[h])]));
      assert.equal(headers["webhook-signature"]?.split(" ").length, 2);
      for (const key of [secret, old]) assert.equal((new Webhook(key).verify(delivery.body, headers) as { type: string }).type, "payment.refunded");

      const audit = await browser.get("/dashboard/audit");
      assert.equal(audit.body.match(/Rotated a webhook signing secret/g)?.length, 1);

      // A day later the old secret is gone from the page (and from the signatures:
      // secret-rotation.test.ts); a visit every 8 hours keeps the session from idling out.
      for (let hours = 8; hours < 24; hours += 8) {
        env.clock.advance(8 * 3_600_000);
        assert.match((await browser.get(page)).body, /Rotating/, `${hours} hours later`);
      }
      env.clock.advance(8 * 3_600_000);
      const dayLater = await browser.get(page);
      assert.equal(dayLater.statusCode, 200);
      assert.match(dayLater.body, /Webhook endpoint/);
      assert.doesNotMatch(dayLater.body, /Rotating/);
    });

    test("a bad URL is refused with the form kept and escaped; forged forms and foreign workspaces are refused", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const theirs = await seedWorkspace(env.services);
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const list = `/dashboard/w/${ws.slug}/test/webhooks`;
      await browser.get(list);
      const bad = await browser.post(list, { url: "javascript:<script>alert(1)</script>", "event:subscription.cancelled": "1" });
      assert.equal(bad.statusCode, 400);
      assert.match(bad.body, /url must use http or https/);
      assert.ok(bad.body.includes('value="javascript:&lt;script&gt;alert(1)&lt;/script&gt;"'));
      assert.ok(!bad.body.includes("<script>"));
      assert.match(bad.body, /name="event:subscription\.cancelled" value="1" checked>/, "the ticked types stay ticked");
      assert.equal(bad.body.match(SECRET), null);

      // Without the form's token nothing is added.
      const forged = await browser.post(list, { url: "https://example.com/hook", _csrf: "0".repeat(64) });
      assert.equal(forged.statusCode, 403);
      const crossSite = await browser.post(list, { url: "https://example.com/hook" }, { "sec-fetch-site": "cross-site" });
      assert.equal(crossSite.statusCode, 403);
      assert.match((await browser.get(list)).body, /No test endpoints yet/);

      // Another owner's workspace, and its endpoint through my address, are not found.
      const theirBrowser = new TestBrowser(app);
      await theirBrowser.signIn(env.dataDir, theirs.ownerEmail);
      await theirBrowser.get(`/dashboard/w/${theirs.slug}/test/webhooks`);
      const theirId = endpointIdOf(
        (await addThroughForm(theirBrowser, `/dashboard/w/${theirs.slug}/test/webhooks`, { url: "https://example.com/theirs" })).body,
      );
      assert.ok(theirId);
      assert.equal((await browser.get(`/dashboard/w/${theirs.slug}/test/webhooks`)).statusCode, 404);
      assert.equal((await browser.get(`${list}/${theirId}`)).statusCode, 404);
      assert.equal((await browser.post(`${list}/${theirId}/disable`)).statusCode, 404);
      assert.equal((await browser.post(`${list}/${theirId}/secret`, { confirm: "1", code: "123456" })).statusCode, 404);
      assert.equal((await browser.post(`${list}/${theirId}/secret/rotate`, { confirm: "1", code: "123456" })).statusCode, 404);
      assert.match((await theirBrowser.get(`/dashboard/w/${theirs.slug}/test/webhooks`)).body, /badge-ok">Enabled/, "still enabled");
      // The same endpoint is not in my live environment either.
      assert.equal((await browser.get(`/dashboard/w/${ws.slug}/live/webhooks/${theirId}`)).statusCode, 404);
    });

    test("revealing the secret needs a fresh mailed code; disable, enable, and recover what failed after seeing how many", async () => {
      const env = await dashboardServices(dialect);
      env.clock.set(Date.now());
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const receiver = await startReceiver(answer(503, "down"));
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const signInCode = await readCode(env.dataDir, ws.ownerEmail);
      const list = `/dashboard/w/${ws.slug}/test/webhooks`;
      await browser.get(list);
      const added = await addThroughForm(browser, list, { url: receiver.url });
      const [secret] = added.body.match(SECRET) ?? [];
      const id = endpointIdOf(added.body);
      assert.ok(secret && id);
      const page = `${list}/${id}`;

      await browser.get(page);
      const asked = await browser.post(`${page}/secret`);
      assert.equal(asked.statusCode, 200);
      assert.match(asked.body, /Confirm it is you/);
      assert.equal(asked.body.match(SECRET), null);
      const code = await readCode(env.dataDir, ws.ownerEmail);
      assert.notEqual(code, signInCode);
      assert.equal((await browser.post(`${page}/secret`, { confirm: "1" })).statusCode, 400);
      const wrong = await browser.post(`${page}/secret`, { confirm: "1", code: code === "000000" ? "111111" : "000000" });
      assert.equal(wrong.statusCode, 400);
      assert.equal(wrong.body.match(SECRET), null);
      const revealed = await browser.post(`${page}/secret`, { confirm: "1", code });
      assert.equal(revealed.statusCode, 200);
      assert.deepEqual(revealed.body.match(SECRET), [secret]);
      assert.equal((await browser.post(`${page}/secret`, { confirm: "1", code })).statusCode, 400, "the code is spent");

      // One failing delivery: tried once, then failed by disabling the endpoint.
      await browser.post(`${page}/test`, { type: "subscription.cancelled" });
      await testWorker(env.services).drain();
      assert.equal(receiver.received.length, 1);
      // The 503 reads as a sentence first, the status after it.
      assert.match(
        (await browser.get(page)).body,
        /<span class="failure-plain">Your server, or a proxy before it, is unavailable<\/span> <code class="raw-detail">HTTP 503<\/code>/,
      );
      const askDisable = await browser.get(`${page}/disable`);
      assert.match(askDisable.body, /Disable this endpoint\?/);
      assert.match(askDisable.body, /1 delivery waiting to be sent to it \(first attempts and retries\) will be marked failed/);
      assert.match((await browser.get(page)).body, /badge-failing">Retrying<\/span> <span class="state-note">next at/, "asking disables nothing");
      assert.equal((await browser.post(`${page}/disable`)).headers.location, `${page}?disabled=1`);
      const disabled = await browser.get(`${page}?disabled=1`);
      assert.match(disabled.body, /badge-off">Disabled<\/span> <span class="state-note">turned off by an owner/);
      assert.match(disabled.body, /badge-failing">Failed/);
      assert.equal((await browser.get(`${page}/recover?since=day`)).statusCode, 400, "nothing is recovered to a disabled endpoint");

      receiver.handle = answer(200, "ok");
      assert.equal((await browser.post(`${page}/enable`)).headers.location, `${page}?enabled=1`);
      const enabled = await browser.get(`${page}?enabled=1`);
      assert.match(enabled.body, /Recover what failed while it was off\?/);
      const confirm = await browser.get(`${page}/recover?since=day`);
      assert.match(confirm.body, /<dt>Failed<\/dt><dd>1 delivery /);
      assert.match(confirm.body, /<dt>Still being retried<\/dt><dd>0 deliveries /);
      assert.equal(receiver.received.length, 1, "seeing the count sends nothing");
      assert.equal((await browser.get(`${page}/recover?since=fortnight`)).statusCode, 400);
      const recovered = await browser.post(`${page}/recover`, { since: "day" });
      assert.equal(recovered.headers.location, `${page}?recovered=1`);
      await testWorker(env.services).drain();
      assert.equal(receiver.received.length, 2);
      assert.match((await browser.get(`${page}?recovered=1`)).body, /1 delivery is queued/);
      assert.match((await browser.get(`${page}/recover?since=day`)).body, /nothing to send again/);

      const audit = await browser.get("/dashboard/audit");
      for (const what of ["Revealed a webhook signing secret", "Disabled a webhook endpoint", "Enabled a webhook endpoint", "Recovered failed deliveries"]) {
        assert.ok(audit.body.includes(what), what);
      }
      // The API's own calls are not owners' actions: nothing is audited for them.
      const viaApi = await app.inject({
        method: "POST",
        url: `/api/v1/webhooks/endpoints/${id}/disable`,
        headers: { authorization: `Bearer ${ws.testKey}` },
      });
      assert.equal(viaApi.statusCode, 200);
      const again = await browser.get("/dashboard/audit");
      assert.equal(again.body.match(/Disabled a webhook endpoint/g)?.length, 1);
    });
  });
}
