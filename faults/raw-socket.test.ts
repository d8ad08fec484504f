// What app.inject cannot send: bytes that are not valid HTTP, written to a `warden serve`
// socket as they are. Node's parser refuses these before Fastify routes anything; the
// answer must still be Warden's: the error shape, a Request-Id, never a 5xx.
import assert from "node:assert/strict";
import { connect } from "node:net";
import { before, describe, test } from "node:test";
import { DIALECTS, seedWorkspace, type Workspace } from "../src/test-support/harness.js";
import { type Answer, problemsWith, recordFigures, type SharedDatabase, sharedDatabase } from "./fault-support.js";

/** Writes the bytes, reads until the server closes or goes quiet, and parses the first answer. */
async function sendRaw(port: number, bytes: Buffer): Promise<Answer & { raw: string }> {
  const received = await new Promise<Buffer>((resolve) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, "127.0.0.1");
    let quiet: NodeJS.Timeout | undefined;
    const finish = () => {
      clearTimeout(quiet);
      socket.destroy();
      resolve(Buffer.concat(chunks));
    };
    socket.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      clearTimeout(quiet);
      quiet = setTimeout(finish, 300);
    });
    socket.on("error", finish);
    socket.on("end", finish);
    socket.on("close", finish);
    // A server that answers nothing at all is a failure too: the test sees an empty answer.
    quiet = setTimeout(finish, 3_000);
    socket.write(bytes);
  });
  const raw = received.toString("latin1");
  const split = raw.indexOf("\r\n\r\n");
  const head = split < 0 ? raw : raw.slice(0, split);
  let body = split < 0 ? "" : raw.slice(split + 4);
  const [statusLine = "", ...headerLines] = head.split("\r\n");
  const status = Number(statusLine.split(" ")[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(":");
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  if (headers["transfer-encoding"] === "chunked") body = decodeChunks(body);
  const length = Number(headers["content-length"]);
  if (Number.isInteger(length)) body = body.slice(0, length);
  return { status, headers, body: Buffer.from(body, "latin1").toString("utf8"), raw };
}

function decodeChunks(text: string): string {
  let out = "";
  let rest = text;
  for (;;) {
    const line = rest.indexOf("\r\n");
    const size = Number.parseInt(rest.slice(0, line), 16);
    if (!(size > 0)) return out;
    out += rest.slice(line + 2, line + 2 + size);
    rest = rest.slice(line + 2 + size + 2);
  }
}

interface RawCase {
  name: string;
  bytes: (ws: Workspace) => Buffer;
  /** The status the case must get, when one is due (otherwise any 4xx). */
  status?: number;
  /** Valid HTTP that may well succeed: only the promises of every answer hold. */
  mayPass?: boolean;
}

const host = (ws: Workspace) => `Host: ${ws.slug}.warden.test\r\n`;
const auth = (ws: Workspace) => `Authorization: Bearer ${ws.testKey}\r\n`;
const list = (ws: Workspace) => `/api/v1/tools/${ws.tool}/customers`;
const grants = (ws: Workspace) => `/api/v1/tools/${ws.tool}/grants`;
const text = (s: string) => Buffer.from(s, "latin1");

const CASES: RawCase[] = [
  {
    name: "a header name with a space in it",
    bytes: (ws) => text(`GET ${list(ws)} HTTP/1.1\r\n${host(ws)}${auth(ws)}Bad Header: x\r\nConnection: close\r\n\r\n`),
    status: 400,
  },
  {
    name: "a chunk size that is not hexadecimal",
    bytes: (ws) =>
      text(
        `POST ${grants(ws)} HTTP/1.1\r\n${host(ws)}${auth(ws)}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
      ),
    status: 400,
  },
  {
    name: "Content-Length together with Transfer-Encoding: chunked",
    bytes: (ws) =>
      text(
        `POST ${grants(ws)} HTTP/1.1\r\n${host(ws)}${auth(ws)}Content-Type: application/json\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
      ),
    status: 400,
  },
  {
    name: "two different Content-Length headers",
    bytes: (ws) =>
      text(
        `POST ${grants(ws)} HTTP/1.1\r\n${host(ws)}${auth(ws)}Content-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 3\r\nConnection: close\r\n\r\n{}`,
      ),
    status: 400,
  },
  {
    name: "raw control and high bytes in the path",
    bytes: (ws) =>
      Buffer.concat([
        text("GET /api/v1/tools/"),
        Buffer.from([0x00, 0xff, 0x7f, 0x01]),
        text(`/customers HTTP/1.1\r\n${host(ws)}${auth(ws)}Connection: close\r\n\r\n`),
      ]),
    status: 400,
  },
  {
    name: "a 20 KB Authorization header",
    bytes: (ws) => text(`GET ${list(ws)} HTTP/1.1\r\n${host(ws)}Authorization: Bearer ${"k".repeat(20_000)}\r\nConnection: close\r\n\r\n`),
    status: 431,
  },
  { name: "Expect: foo", bytes: (ws) => text(`GET ${list(ws)} HTTP/1.1\r\n${host(ws)}${auth(ws)}Expect: foo\r\nConnection: close\r\n\r\n`), status: 417 },
  // HTTP/1.1 allows an empty Host (a target with no authority); Warden may serve it as naming no
  // workspace or refuse it: either way the answer keeps the promises.
  { name: "an empty Host", bytes: (ws) => text(`GET ${list(ws)} HTTP/1.1\r\nHost: \r\n${auth(ws)}Connection: close\r\n\r\n`), mayPass: true },
  { name: "an empty Host and no key", bytes: (ws) => text(`GET ${list(ws)} HTTP/1.1\r\nHost: \r\nConnection: close\r\n\r\n`) },
  { name: "no Host at all", bytes: (ws) => text(`GET ${list(ws)} HTTP/1.1\r\n${auth(ws)}Connection: close\r\n\r\n`), status: 400 },
  {
    name: "a NUL byte in a header value",
    bytes: (ws) => text(`GET ${list(ws)} HTTP/1.1\r\n${host(ws)}${auth(ws)}X-Note: a\u0000b\r\nConnection: close\r\n\r\n`),
    status: 400,
  },
  { name: "a method that is not a token", bytes: (ws) => text(`G(T ${list(ws)} HTTP/1.1\r\n${host(ws)}Connection: close\r\n\r\n`), status: 400 },
  { name: "a request line that is not HTTP", bytes: () => text("hello there\r\n\r\n"), status: 400 },
  {
    name: "an obsolete folded header line",
    bytes: (ws) => text(`GET ${list(ws)} HTTP/1.1\r\n${host(ws)}Authorization: Bearer\r\n ${ws.testKey}\r\nConnection: close\r\n\r\n`),
  },
  // Valid HTTP, but a percent-encoded NUL in a customer's address: the database must never see it raw.
  {
    name: "a percent-encoded NUL in a retrieved address",
    bytes: (ws) => text(`GET ${list(ws)}/a%00b%40example.com HTTP/1.1\r\n${host(ws)}${auth(ws)}Connection: close\r\n\r\n`),
  },
  {
    name: "a JSON body with a NUL in a field",
    bytes: (ws) => {
      const body = JSON.stringify({ email: "nul\u0000@example.com" });
      return text(
        `POST ${grants(ws)} HTTP/1.1\r\n${host(ws)}${auth(ws)}Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
      );
    },
  },
];

for (const dialect of DIALECTS) {
  describe(`raw bytes on a socket of warden serve (${dialect})`, () => {
    let shared: SharedDatabase;
    let ws: Workspace;
    let port: number;
    const outcomes: Record<string, number> = {};
    before(async () => {
      shared = await sharedDatabase(dialect, 1, { WARDEN_DELIVERY_WORKER: "0" });
      ws = await seedWorkspace(shared.services);
      port = Number(new URL(shared.servers[0]?.baseUrl ?? "").port);
    });

    test("a request its client abandons half-way is not logged as an error of the service", async () => {
      const server = shared.servers[0];
      assert.ok(server);
      const logged = server.log().length;
      const halfSent = [
        `POST ${grants(ws)} HTTP/1.1\r\n${host(ws)}${auth(ws)}Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"email":`,
        `POST /processor/stripe/${ws.slug} HTTP/1.1\r\n${host(ws)}Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"id":`,
        `POST /processor/stripe/${ws.slug} HTTP/1.1\r\n${host(ws)}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"id"\r\n`,
        `POST /api/client/v1/sign-in HTTP/1.1\r\n${host(ws)}Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"email":`,
      ];
      for (const request of halfSent) {
        await new Promise<void>((resolve) => {
          const socket = connect(port, "127.0.0.1", () => {
            socket.write(request);
            setTimeout(() => {
              socket.destroy();
              resolve();
            }, 100);
          });
        });
      }
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const errors = server
        .log()
        .slice(logged)
        .split("\n")
        .filter((line) => /"level":(50|60)/.test(line));
      assert.deepEqual(errors, [], "logged at error level");
    });

    for (const c of CASES) {
      test(`${c.name}: answered ${c.status ?? (c.mayPass ? "2xx or 4xx" : "4xx")} in the error shape with a Request-Id`, async () => {
        const answer = await sendRaw(port, c.bytes(ws));
        outcomes[c.name] = answer.status;
        const problems = problemsWith(answer);
        if (c.status !== undefined && answer.status !== c.status) problems.push(`status ${answer.status}, not ${c.status}`);
        if (!c.mayPass && !(answer.status >= 400 && answer.status < 500)) problems.push(`status ${answer.status} is not a 4xx`);
        if (problems.length > 0) recordFigures(`raw-socket-${dialect}-failed`, { case: c.name, status: answer.status, problems });
        assert.deepEqual(problems, [], `answer was: ${JSON.stringify(answer.raw.slice(0, 400))}`);
      });
    }
  });
}
