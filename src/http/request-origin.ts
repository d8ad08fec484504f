import type { FastifyRequest } from "fastify";
import type { ActorOrigin } from "../audit/audit.store.js";

/**
 * Where a request came from, as owners are told of it: its network address (through a
 * trusted proxy, WARDEN_TRUST_PROXY, the client's) and its User-Agent, cut at 300
 * characters (a header can be 16 KiB).
 */
export function originOf(request: FastifyRequest): ActorOrigin {
  const agent = request.headers["user-agent"];
  return { ip: request.ip, userAgent: typeof agent === "string" && agent !== "" ? agent.slice(0, 300) : null };
}
