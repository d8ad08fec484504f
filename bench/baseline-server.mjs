// The machine's limit for an HTTP answer: a bare node:http server that answers every
// request with one fixed JSON body of the given size. Plain JavaScript, run by plain
// node, so that nothing stands between node:http and the socket.
//
//   node bench/baseline-server.mjs PORT BODY_BYTES [STATUS]
import { createServer } from "node:http";

const [port, bodyBytes, status = "200"] = process.argv.slice(2).map(Number);
const padding = Math.max(0, bodyBytes - '{"pad":""}'.length);
const body = Buffer.from(JSON.stringify({ pad: "x".repeat(padding) }));
const headers = { "content-type": "application/json; charset=utf-8", "content-length": String(body.length) };

const server = createServer((request, response) => {
  // A grant's body is read, as Warden reads it, before the answer.
  request.resume();
  request.on("end", () => {
    response.writeHead(status, headers);
    response.end(body);
  });
});
server.keepAliveTimeout = 72_000;
server.listen(port, "127.0.0.1");
process.on("SIGTERM", () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
