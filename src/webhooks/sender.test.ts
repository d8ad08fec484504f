// The HTTP side of an attempt: kept-alive connections, and a receiver that drops a
// kept-alive connection as it is reused (the attempt is made again on a new one).
import assert from "node:assert/strict";
import dns, { type LookupAddress } from "node:dns";
import { createServer, type Server } from "node:http";
import { syncBuiltinESMExports } from "node:module";
import type { AddressInfo, Socket } from "node:net";
import { after, describe, mock, test } from "node:test";
import { DEFAULT_WORKER_OPTIONS } from "./delivery.worker.js";
import { postWebhook } from "./sender.js";

const options = { timeoutMs: 2_000, allowPrivate: true, now: () => Date.now() };

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
}

describe("webhook sender", () => {
  test("attempts to one receiver share a kept-alive connection", async () => {
    const sockets = new Set<Socket>();
    const server = createServer((request, response) => {
      sockets.add(request.socket);
      request.resume().on("end", () => response.end("ok"));
    });
    const url = await listen(server);
    for (let i = 0; i < 5; i++) {
      const result = await postWebhook(url, { "content-type": "application/json" }, `{"n":${i}}`, options);
      assert.equal(result.statusCode, 200, result.error ?? "");
      assert.equal(result.responseBody, "ok");
    }
    assert.equal(sockets.size, 1);
    server.closeAllConnections();
  });

  test("an endpoint's URL reaches the receiver whole: its path, query and credentials; an invalid or private one is refused", async () => {
    const seen: { url?: string; authorization?: string }[] = [];
    const server = createServer((request, response) => {
      seen.push({ url: request.url, authorization: request.headers.authorization });
      request.resume().on("end", () => response.end());
    });
    const url = await listen(server);
    const withParts = url.replace("http://", "http://vendor:s%40cret@").replace("/hook", "/hooks/warden?team=7#ignored");
    for (let i = 0; i < 2; i++) {
      const result = await postWebhook(withParts, {}, "{}", options);
      assert.equal(result.statusCode, 200, result.error ?? "");
    }
    const basic = `Basic ${Buffer.from("vendor:s@cret").toString("base64")}`;
    assert.deepEqual(seen, [
      { url: "/hooks/warden?team=7", authorization: basic },
      { url: "/hooks/warden?team=7", authorization: basic },
    ]);
    assert.equal((await postWebhook("not a url", {}, "{}", options)).error, "invalid endpoint URL");
    const refused = await postWebhook("http://[::1]:9/hook", {}, "{}", { ...options, allowPrivate: false });
    assert.match(refused.error ?? "", /^refused: ::1 is a private address/);
    server.closeAllConnections();
  });

  test("without WARDEN_ALLOW_PRIVATE_WEBHOOKS a private host is refused before any connection, however it is written", async () => {
    let connections = 0;
    const server = createServer((request, response) => request.resume().on("end", () => response.end()));
    server.on("connection", () => connections++);
    const { port } = new URL(await listen(server));
    for (const [host, reason] of [
      ["[::7f00:1]", "::7f00:1 is a private address (IPv4-compatible, it carries 127.0.0.1)"],
      ["[::ffff:0:7f00:1]", "::ffff:0:7f00:1 is a private address (IPv4-translated, it carries 127.0.0.1)"],
      ["[64:ff9b::a9fe:a9fe]", "64:ff9b::a9fe:a9fe is a private address (NAT64, it carries 169.254.169.254)"],
      ["[2002:7f00:1::]", "2002:7f00:1:: is a private address (6to4, it carries 127.0.0.1)"],
      ["[2001:0:4136:e378:8000:63bf:80ff:fffe]", "2001:0:4136:e378:8000:63bf:80ff:fffe is a private address (Teredo, it carries 127.0.0.1)"],
      ["[::]", ":: is a private address"],
      ["[fe80::1]", "fe80::1 is a private address (outside 2000::/3, the global unicast range)"],
      ["0x7f.1", "127.0.0.1 is a private address"],
      ["2130706433", "127.0.0.1 is a private address"],
      ["0", "0.0.0.0 is a private address"],
      ["100.64.0.1", "100.64.0.1 is a private address"],
      ["LOCALHOST.", "localhost is a local-only name"],
      ["metadata.google.internal.", "metadata.google.internal is a cloud metadata service's name"],
      ["instance-data", "instance-data is a cloud metadata service's name"],
    ]) {
      const result = await postWebhook(`http://${host}:${port}/hook`, {}, "{}", { ...options, allowPrivate: false });
      assert.deepEqual([result.statusCode, result.error], [null, `refused: ${reason} (set WARDEN_ALLOW_PRIVATE_WEBHOOKS=1 to allow)`], host);
    }
    assert.equal(connections, 0);
  });

  test("a name whose DNS answers are all private, in any IPv6 form, is refused as the connection is made", async () => {
    const answers: LookupAddress[] = ["::ffff:7f00:1", "::7f00:1", "2002:7f00:1::", "64:ff9b::7f00:1", "2001::80ff:fffe", "169.254.169.254"].map((address) => ({
      address,
      family: address.includes(":") ? 6 : 4,
    }));
    const looked: string[] = [];
    mock.method(dns, "lookup", (hostname: string, _options: unknown, callback: (error: null, addresses: LookupAddress[]) => void) => {
      looked.push(hostname);
      callback(null, answers);
    });
    syncBuiltinESMExports();
    after(() => {
      mock.restoreAll();
      syncBuiltinESMExports();
    });
    const result = await postWebhook("http://hooks.example.com:9/hook", {}, "{}", { ...options, allowPrivate: false });
    assert.deepEqual([result.statusCode, result.error], [null, "EPRIVATE: hooks.example.com resolves only to private addresses"]);
    assert.deepEqual(looked, ["hooks.example.com"]);
  });

  test("a kept-alive connection dropped as it is reused is retried once on a new one; the receiver answers that", async () => {
    const served = new Map<Socket, number>();
    const server = createServer((request, response) => {
      const count = (served.get(request.socket) ?? 0) + 1;
      served.set(request.socket, count);
      // The second request on a connection finds it gone, as when a receiver closes an idle socket at that moment.
      if (count === 2) return request.socket.destroy();
      request.resume().on("end", () => response.end("fresh"));
    });
    const url = await listen(server);
    assert.equal((await postWebhook(url, {}, "{}", options)).statusCode, 200);
    const second = await postWebhook(url, {}, "{}", options);
    assert.equal(second.statusCode, 200, second.error ?? "");
    assert.equal(second.responseBody, "fresh");
    assert.equal(served.size, 2, "the retry came on a new connection");
    server.closeAllConnections();
  });

  test("an attempt gets no answer for longer than its timeout: 15 s for warden serve's worker", async () => {
    assert.equal(DEFAULT_WORKER_OPTIONS.timeoutMs, 15_000);
    const server = createServer(() => {
      // Never answers.
    });
    const url = await listen(server);
    const started = Date.now();
    const result = await postWebhook(url, {}, "{}", { ...options, timeoutMs: 300 });
    assert.equal(result.statusCode, null);
    assert.match(String(result.error), /timeout after 300 ms/);
    assert.ok(Date.now() - started < 2_000);
    server.closeAllConnections();
  });

  test("a connection refused on a first attempt is a failure, not retried", async () => {
    const server = createServer();
    const url = await listen(server);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const result = await postWebhook(url, {}, "{}", options);
    assert.equal(result.statusCode, null);
    assert.match(String(result.error), /ECONNREFUSED/);
  });
});
