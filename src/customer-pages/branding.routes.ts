// The workspace's branding as its pages load it, from Warden's own origin (so the pages'
// `img-src 'self'` and `style-src 'self'` hold): `/c/{workspace}/brand.css` (the accent
// as custom properties: no inline style) and `/c/{workspace}/logo`. Their addresses carry
// the branding's version: asked with the current one, browsers and proxies may keep them
// for a year; with any other, they get the current branding, not to be kept.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Services } from "../services.js";
import { brandOfSlug, brandStylesheet, logoOfSlug } from "./branding.service.js";

const cacheFor = (request: FastifyRequest, reply: FastifyReply, version: number) =>
  reply.header("Cache-Control", (request.query as Record<string, unknown>).v === String(version) ? "public, max-age=31536000, immutable" : "no-cache");

export function registerBrandingAssets(app: FastifyInstance, services: Services): void {
  const slugOf = (request: FastifyRequest) => (request.params as { workspace: string }).workspace;

  app.get("/:workspace/brand.css", async (request, reply) => {
    const brand = await brandOfSlug(services, slugOf(request));
    if (!brand) return reply.status(404).header("Content-Type", "text/css; charset=utf-8").send("/* no branding */\n");
    cacheFor(request, reply, brand.version);
    return reply.header("Content-Type", "text/css; charset=utf-8").send(brandStylesheet(brand));
  });

  app.get("/:workspace/logo", async (request, reply) => {
    const logo = await logoOfSlug(services, slugOf(request));
    if (!logo) return reply.status(404).header("Content-Type", "text/plain; charset=utf-8").send("No logo.\n");
    cacheFor(request, reply, logo.version);
    // Its type is the one its bytes were recognised as (never SVG); nosniff (every answer) keeps browsers to it.
    return reply.header("Content-Type", logo.type).header("Content-Security-Policy", "default-src 'none'").send(logo.bytes);
  });
}
