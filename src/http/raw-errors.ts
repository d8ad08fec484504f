import { type IncomingMessage, type ServerResponse, STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import { ApiError, type ErrorCode, statusOf, typeOf } from "../errors/errors.js";
import { newId } from "../ids.js";

// Answers Node's HTTP server gives before Fastify sees a request: a request that does not
// parse (a space in a header name, bad chunking, Content-Length with Transfer-Encoding, a
// bad method, raw bytes in the path), headers over 16 KiB, an Expect Warden cannot meet.
// Node and Fastify answer these with bodies of their own or none; here they take the
// contract's shape and carry a Request-Id like every other answer.

/** The parser's complaint, in Warden's words. */
function describeParseError(code: string | undefined): { code: ErrorCode; message: string } {
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      return { code: "headers_too_large", message: "The request's headers are too large (16 KiB at most)." };
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return { code: "request_timeout", message: "The request took too long to arrive." };
    case "HPE_INVALID_METHOD":
      return { code: "malformed_request", message: "The request's method is not valid HTTP." };
    case "HPE_INVALID_URL":
      return { code: "malformed_request", message: "The request's path is not valid: percent-encode it." };
    case "HPE_INVALID_HEADER_TOKEN":
      return { code: "malformed_request", message: "A header's name or value holds a character HTTP does not allow." };
    case "HPE_UNEXPECTED_CONTENT_LENGTH":
      return { code: "malformed_request", message: "A request may not carry both Content-Length and Transfer-Encoding." };
    case "HPE_INVALID_CHUNK_SIZE":
    case "HPE_INVALID_TRANSFER_ENCODING":
      return { code: "malformed_request", message: "The request's chunked body is malformed." };
    default:
      return { code: "malformed_request", message: "The request is not valid HTTP." };
  }
}

function errorBody(code: ErrorCode, message: string): string {
  return JSON.stringify({ error: { type: typeOf(code), message } });
}

/** Fastify's `clientErrorHandler`: the answer to a request Node could not parse. */
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  // A connection reset has no one to answer.
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  const { code, message } = describeParseError(error.code);
  const status = statusOf(code);
  const body = errorBody(code, message);
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nRequest-Id: ${newId("req")}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

/** The server's `checkExpectation` listener: only `Expect: 100-continue` is met (by Node itself). */
export function refuseExpectation(_request: IncomingMessage, response: ServerResponse): void {
  const body = errorBody("expectation_failed", "Only the Expect value 100-continue is supported; send the request without Expect.");
  response.writeHead(statusOf("expectation_failed"), {
    "Request-Id": newId("req"),
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(body),
  });
  response.end(body);
}

/** HTTP/1.1 requires a Host; Node would answer its absence with an empty 400 of its own. */
export function requireHost(host: string | undefined, httpVersion: string): void {
  if (httpVersion === "1.1" && !host) throw new ApiError("malformed_request", "The request has no Host header; HTTP/1.1 requires one.");
}
