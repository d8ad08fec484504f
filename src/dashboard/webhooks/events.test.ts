import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { breadcrumbTrail, dashboardApp, dashboardServices, TestBrowser } from "../../test-support/dashboard.js";
import { DIALECTS, seedWorkspace } from "../../test-support/harness.js";
import { answer, startReceiver, testWorker } from "../../test-support/webhooks.js";

const EVENT_LINK = /\/events\/(evt_\w+)"><code>/g;

for (const dialect of DIALECTS) {
  describe(`dashboard events and deliveries (${dialect})`, () => {
    test("every event, by type, keyset-paged with the API's cursors; an event's exact payload and its deliveries", async () => {
      const env = await dashboardServices(dialect);
      env.clock.set(Date.now());
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const theirs = await seedWorkspace(env.services);
      const receiver = await startReceiver(answer(200, "ok"));
      const api = (key: string, url: string, payload: unknown) =>
        app.inject({ method: "POST", url, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, payload: JSON.stringify(payload) });
      assert.equal((await api(ws.testKey, "/api/v1/webhooks/endpoints", { url: receiver.url, events: ["payment.disputed"] })).statusCode, 201);
      const sent: string[] = [];
      for (let i = 0; i < 27; i++) {
        const type = i % 9 === 0 ? "payment.disputed" : "purchase.completed";
        const r = await api(ws.testKey, "/api/v1/webhooks/examples", { type });
        assert.equal(r.statusCode, 202);
        sent.push((r.json() as { event: { id: string } }).event.id);
        env.clock.advance(1000);
      }
      const theirEvent = (await api(theirs.testKey, "/api/v1/webhooks/examples", { type: "purchase.completed" })).json() as { event: { id: string } };
      await testWorker(env.services).drain();
      assert.equal(receiver.received.length, 27, "a test event goes to every enabled endpoint, whatever it listens for");

      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const events = `/dashboard/w/${ws.slug}/test/events`;
      const first = await browser.get(events);
      assert.equal(first.statusCode, 200);
      const ids = [...first.body.matchAll(EVENT_LINK)].map((m) => m[1]);
      assert.deepEqual(ids, sent.slice(-25).reverse(), "newest first, a page of 25");
      const next = /href="([^"]+after=[^"]+)"/.exec(first.body)?.[1]?.replaceAll("&amp;", "&");
      assert.ok(next);
      const second = await browser.get(next);
      assert.deepEqual(
        [...second.body.matchAll(EVENT_LINK)].map((m) => m[1]),
        sent.slice(0, 2).reverse(),
      );
      assert.ok(!second.body.includes("Older events"));
      assert.ok(!first.body.includes(theirEvent.event.id), "another workspace's events are not listed");
      // Names before ids: an event is listed by its type, whom it is about and its amount under it (from its payload), then its id.
      assert.ok(
        first.body.includes(
          `<a href="${events}/${sent[26]}"><code>purchase.<wbr>completed</code></a><span class="event-gist">ada@example.com · €29.00</span> <code class="id-secondary">${sent[26]}</code>`,
        ),
        "the type leads, the customer and amount, then the id",
      );

      const disputes = await browser.get(`${events}?type=payment.disputed`);
      assert.deepEqual(
        [...disputes.body.matchAll(EVENT_LINK)].map((m) => m[1]),
        [sent[18], sent[9], sent[0]],
      );
      assert.equal((await browser.get(`${events}?type=nope`)).statusCode, 400);
      // A cursor is bound to its filter and signed: another filter's, or a changed one, is refused.
      const after = new URL(next, "http://x").searchParams.get("after") ?? "";
      assert.equal((await browser.get(`${events}?type=payment.disputed&after=${encodeURIComponent(after)}`)).statusCode, 400);
      assert.equal((await browser.get(`${events}?after=${encodeURIComponent(`${after.slice(0, -3)}AAA`)}`)).statusCode, 400);

      const jump = await browser.get(`${events}?id=${sent[9]}`);
      assert.equal(jump.statusCode, 303);
      const event = await browser.get(String(jump.headers.location));
      assert.equal(event.statusCode, 200);
      assert.ok(event.body.includes(`&quot;id&quot;: &quot;${sent[9]}&quot;,`), "the payload, pretty-printed and escaped");
      assert.match(event.body, /badge-pending">Example/);
      assert.ok(event.body.includes(`>${receiver.url}</a>`));
      assert.match(event.body, /badge-ok">Succeeded/);
      const deliveryId = /\/webhooks\/deliveries\/(dlv_\w+)"/.exec(event.body)?.[1];
      assert.ok(deliveryId);
      // The event's page and its breadcrumbs are named by its type, not "Event".
      assert.match(event.body, /<h1>payment\.disputed<\/h1>/);
      assert.deepEqual(breadcrumbTrail(event.body), ["Test workspace", "Test", "Events", "payment.disputed"]);
      const delivery = await browser.get(`/dashboard/w/${ws.slug}/test/webhooks/deliveries/${deliveryId}`);
      assert.match(delivery.body, /<h1>Delivery of payment\.disputed<\/h1>/);
      assert.deepEqual(breadcrumbTrail(delivery.body), ["Test workspace", "Test", "Webhooks", receiver.url, "Delivery of payment.disputed"]);
      assert.ok(
        delivery.body.includes(
          `<dt>Event</dt><dd><a href="${events}/${sent[9]}"><code>payment.<wbr>disputed</code></a> <code class="id-secondary">${sent[9]}</code></dd>`,
        ),
      );
      assert.equal((await browser.get(`${events}/${theirEvent.event.id}`)).statusCode, 404);
      assert.equal((await browser.get(`/dashboard/w/${ws.slug}/live/events/${sent[9]}`)).statusCode, 404, "a test event is not in live");

      // Deliveries, by status and by event.
      const deliveries = `${events}/deliveries`;
      const succeeded = await browser.get(`${deliveries}?status=succeeded`);
      assert.equal([...succeeded.body.matchAll(/\/webhooks\/deliveries\/dlv_/g)].length, 25, "a page of 25");
      assert.match(succeeded.body, /Older deliveries/);
      assert.match((await browser.get(`${deliveries}?status=failed`)).body, /No deliveries match/);
      const one = await browser.get(`${deliveries}?event=${sent[18]}`);
      assert.equal([...one.body.matchAll(/\/webhooks\/deliveries\/dlv_/g)].length, 1);
      assert.ok(one.body.includes(`value="${sent[18]}"`), "the filter stays filled in");
      // A delivery is listed by its event's type, whom it is about and the amount, the event's id under them (it led with the id).
      assert.ok(
        one.body.includes(
          `<td data-label="Event"><a href="${events}/${sent[18]}"><code>payment.<wbr>disputed</code></a><span class="event-gist">ada@example.com · €29.00</span> <code class="id-secondary">${sent[18]}</code></td>`,
        ),
      );
      assert.equal((await browser.get(`${deliveries}?status=lost`)).statusCode, 400);
    });

    test("events and deliveries by time: the last hour, day, week or 30 days; the next page keeps the window's start", async () => {
      const env = await dashboardServices(dialect);
      env.clock.set(Date.now());
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const receiver = await startReceiver(answer(200, "ok"));
      const api = (url: string, payload: unknown) =>
        app.inject({
          method: "POST",
          url,
          headers: { authorization: `Bearer ${ws.testKey}`, "content-type": "application/json" },
          payload: JSON.stringify(payload),
        });
      assert.equal((await api("/api/v1/webhooks/endpoints", { url: receiver.url })).statusCode, 201);
      const send = async () => ((await api("/api/v1/webhooks/examples", { type: "purchase.completed" })).json() as { event: { id: string } }).event.id;
      const old = await send();
      env.clock.advance(10 * 24 * 3_600_000);
      const earlier: string[] = [];
      for (let i = 0; i < 27; i++) {
        earlier.push(await send());
        env.clock.advance(1000);
      }
      env.clock.advance(2 * 3_600_000);
      const recent = [await send()];
      env.clock.advance(1000);
      recent.push(await send());

      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const events = `/dashboard/w/${ws.slug}/test/events`;
      const ids = (body: string) => [...body.matchAll(EVENT_LINK)].map((m) => m[1]);
      const hour = await browser.get(`${events}?within=hour`);
      assert.deepEqual(ids(hour.body), [...recent].reverse(), "only the last hour's events");
      assert.match(hour.body, /<option value="hour" selected>Last hour/);
      const week = await browser.get(`${events}?within=week`);
      assert.ok(!ids(week.body).includes(old) && ids(week.body).length === 25);
      const next = /href="([^"]+after=[^"]+)"/.exec(week.body)?.[1]?.replaceAll("&amp;", "&");
      assert.ok(next);
      assert.ok(next.includes("created_after="), next);
      // Half an hour later the next page is still of the same window, its start carried along.
      env.clock.advance(1_800_000);
      const second = await browser.get(next);
      assert.equal(second.statusCode, 200);
      assert.deepEqual(ids(second.body), earlier.slice(0, 4).reverse(), "the rest of the week, and not the older event");
      assert.match(second.body, /<option value="week" selected>/);
      const moved = new URL(next, "http://x");
      moved.searchParams.set("created_after", new Date(Date.parse(moved.searchParams.get("created_after") ?? "") - 1000).toISOString());
      assert.equal((await browser.get(`${moved.pathname}${moved.search}`)).statusCode, 400, "the cursor is bound to the window's start");
      assert.ok(ids((await browser.get(`${events}?within=month`)).body).length === 25);
      assert.deepEqual(ids((await browser.get(events)).body).length, 25);
      assert.equal((await browser.get(`${events}?within=year`)).statusCode, 400);
      assert.match((await browser.get(`${events}?within=hour&type=payment.disputed`)).body, /No payment.disputed events/);

      const deliveries = `${events}/deliveries`;
      const count = (body: string) => [...body.matchAll(/\/webhooks\/deliveries\/dlv_/g)].length;
      env.clock.advance(-1_800_000);
      const lastHour = await browser.get(`${deliveries}?within=hour`);
      assert.equal(count(lastHour.body), 2);
      assert.match(lastHour.body, /<option value="hour" selected>/);
      const byDay = await browser.get(`${deliveries}?within=day&status=pending`);
      assert.equal(count(byDay.body), 25);
      const nextDeliveries = /href="([^"]+after=[^"]+)"/.exec(byDay.body)?.[1]?.replaceAll("&amp;", "&");
      assert.ok(nextDeliveries);
      assert.ok(nextDeliveries.includes("created_after=") && nextDeliveries.includes("status=pending"), nextDeliveries);
      env.clock.advance(3_600_000);
      assert.equal(count((await browser.get(nextDeliveries)).body), 4, "the rest of the day's 29 deliveries, not the old one");
      assert.equal(count((await browser.get(`${deliveries}?event=${old}&within=week`)).body), 0);
      assert.equal(count((await browser.get(`${deliveries}?event=${old}&within=month`)).body), 1);
      assert.equal((await browser.get(`${deliveries}?within=%3Cb%3E`)).statusCode, 400);
    });
  });
}
