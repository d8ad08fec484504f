import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { connect } from "node:net";
import { Writable } from "node:stream";
import { after, before, describe, test } from "node:test";
import type { FastifyInstance } from "fastify";
import { buildApp } from "../app.js";
import { testServices } from "../test-support/harness.js";

let app: FastifyInstance;
let port: number;

before(async () => {
  const { services } = await testServices("sqlite");
  app = await buildApp(services, { logger: false });
  await app.listen({ port: 0, host: "127.0.0.1" });
  port = (app.server.address() as AddressInfo).port;
});
after(() => app.close());

/** Sends raw bytes and reads the whole answer (the server closes, or 2 s pass). */
function send(raw: string | Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    socket.setTimeout(2000, () => socket.end());
    socket.on("data", (chunk) => chunks.push(chunk));
    socket.on("error", reject);
    socket.on("close", () => resolve(Buffer.concat(chunks).toString("latin1")));
    socket.write(raw);
  });
}

/** The answer is the contract's error, with a Request-Id, and nothing of Node's or Fastify's. */
function assertErrorAnswer(answer: string, status: number): void {
  const [head = "", body = ""] = answer.split("\r\n\r\n");
  assert.match(head, new RegExp(`^HTTP/1\\.1 ${status} `), answer);
  assert.match(head, /\r\nrequest-id: req_[0-9A-Za-z]+/i, answer);
  assert.match(head, /\r\ncontent-type: application\/json/i, answer);
  const parsed = JSON.parse(body);
  assert.deepEqual(Object.keys(parsed), ["error"]);
  assert.equal(parsed.error.type, "invalid_request_error");
  assert.ok(parsed.error.message.length > 0);
  assert.doesNotMatch(body, /statusCode|Client Error|Bad Request/);
}

describe("requests that do not parse as HTTP, answered in the contract's shape", () => {
  const cases: [string, string | Buffer, number][] = [
    ["a header with a space in its name", "GET /api/v1/tools HTTP/1.1\r\nHost: localhost\r\nBad Header: x\r\n\r\n", 400],
    ["bad chunking", "POST /api/v1/tools/t/grants HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400],
    ["a bad method", "G@T /api/v1/tools HTTP/1.1\r\nHost: localhost\r\n\r\n", 400],
    [
      "Content-Length with Transfer-Encoding",
      "POST /api/v1/tools/t/grants HTTP/1.1\r\nHost: localhost\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
      400,
    ],
    ["raw bytes in the path", Buffer.from("GET /api/v1/\x01\x7f HTTP/1.1\r\nHost: localhost\r\n\r\n", "latin1"), 400],
    ["a 20 KB Authorization header", `GET /api/v1/tools HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${"a".repeat(20_000)}\r\n\r\n`, 431],
    ["an Expect other than 100-continue", "GET /api/v1/tools/t/customers HTTP/1.1\r\nHost: localhost\r\nExpect: foo\r\n\r\n", 417],
    ["an empty Host", "GET /api/v1/tools/t/customers HTTP/1.1\r\nHost:\r\nConnection: close\r\n\r\n", 400],
    ["no Host", "GET /api/v1/tools/t/customers HTTP/1.1\r\nConnection: close\r\n\r\n", 400],
  ];
  for (const [name, raw, status] of cases) {
    test(`${name} is answered ${status}`, async () => {
      assertErrorAnswer(await send(raw), status);
    });
  }

  test("HTTP/1.0 without a Host is still served", async () => {
    const answer = await send("GET /api/v1/tools/t/customers HTTP/1.0\r\n\r\n");
    assert.match(answer, /^HTTP\/1\.1 401 /);
  });
});

describe("the docs' static files never serve a file outside their folder", () => {
  for (const [path, status, type] of [
    ["/api/v1/docs/static/../../../package.json", 404, "not_found"],
    ["/api/v1/docs/static/%2e%2e/%2e%2e/%2e%2e/package.json", 404, "not_found"],
    ["/api/v1/docs/static/..%2f..%2f..%2fpackage.json", 404, "not_found"],
    ["/api/v1/docs/static/index.css%00", 400, "invalid_request_error"],
  ] as const) {
    test(`${path} is answered ${status} ${type}, with nothing of the file`, async () => {
      const answer = await send(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
      const [head = "", body = ""] = answer.split("\r\n\r\n");
      assert.match(head, new RegExp(`^HTTP/1\\.1 ${status} `), answer);
      assert.match(head, /\r\nrequest-id: req_/i);
      assert.equal(JSON.parse(body).error.type, type);
      assert.doesNotMatch(body, /"dependencies"|warden/);
    });
  }
});

describe("a client that closes its request midway", () => {
  test("is logged as aborted, at no error level", { timeout: 10_000 }, async () => {
    const { services } = await testServices("sqlite");
    const lines: { level: number; msg: string }[] = [];
    let answered = () => {};
    const done = new Promise<void>((resolve) => {
      answered = resolve;
    });
    const stream = new Writable({
      write(chunk, _encoding, next) {
        const line = JSON.parse(String(chunk));
        lines.push(line);
        next();
      },
    });
    const logged = await buildApp(services, { logger: { level: "info", stream } });
    await logged.listen({ port: 0, host: "127.0.0.1" });
    try {
      const socket = connect((logged.server.address() as AddressInfo).port, "127.0.0.1");
      socket.write("POST /api/client/v1/sign-in HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{");
      logged.server.once("request", (request) => {
        // The body's error (the abort) is handled before the request's close is emitted.
        request.once("close", () => setImmediate(answered));
        setImmediate(() => socket.destroy());
      });
      await done;
    } finally {
      await logged.close();
    }
    // The request was logged (one line when it ends: http/request-log.ts), and not as a failure.
    assert.ok(
      lines.some((line) => line.msg === "request aborted"),
      JSON.stringify(lines),
    );
    assert.deepEqual(
      lines.filter((line) => line.level >= 50),
      [],
    );
  });
});
