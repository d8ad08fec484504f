// Configure › Branding: the accent colour, logo and default language of the workspace's
// hosted customer pages, through `updateBranding` (the use case of `warden admin
// workspace update`), audited with the owner as actor. The logo is the one file upload of the
// dashboard: this plugin alone parses multipart/form-data, with the platform's own
// parser (the Fetch API's `Response.formData`), no package.
import type { FastifyInstance, FastifyRequest } from "fastify";
import { brandOf, updateBranding } from "../../customer-pages/branding.service.js";
import type { Services } from "../../services.js";
import { type WorkspacePage, workspacePage } from "../shared/owner-context.js";
import { fieldError, sendPage } from "../shared/page.js";
import { formField, PageRefusal } from "../shared/security.js";
import { type BrandingFlash, type BrandingForm, brandingPath, brandingView } from "./branding.views.js";

// Room for a logo somewhat over the limit, so that its refusal names its size instead of
// answering a bare 413; anything bigger is no logo.
const UPLOAD_LIMIT_BYTES = 4 * 1024 * 1024;

const FLASHES: readonly string[] = ["accent", "logo", "logo-removed", "language"] satisfies BrandingFlash[];

export async function brandingRoutes(app: FastifyInstance, options: { services: Services }): Promise<void> {
  const { services } = options;
  const base = "/w/:workspace/:env/branding";

  app.addContentTypeParser("multipart/form-data", { parseAs: "buffer", bodyLimit: UPLOAD_LIMIT_BYTES }, async (request: FastifyRequest, body: Buffer) => {
    let form: FormData;
    try {
      form = await new Response(new Uint8Array(body), { headers: { "content-type": String(request.headers["content-type"]) } }).formData();
    } catch {
      throw new PageRefusal(400, "Request not understood", "The upload was cut short or malformed. Choose the file again and upload it.");
    }
    const fields: Record<string, string | Buffer> = {};
    // forEach, not for…of: the bench's type-check sees the DOM's FormData, which iterates only with `dom.iterable`.
    const entries: [string, string | Blob][] = [];
    form.forEach((value, name) => {
      entries.push([name, value]);
    });
    for (const [name, value] of entries) {
      if (name in fields) continue;
      fields[name] = typeof value === "string" ? value : Buffer.from(await value.arrayBuffer());
    }
    return fields;
  });

  const render = async (page: WorkspacePage, extra: { flash?: BrandingFlash; form?: BrandingForm } = {}) =>
    brandingView(page.frame, { brand: await brandOf(services, page.workspace), ...extra });

  const change = async (page: WorkspacePage, field: BrandingForm["field"], input: { accent?: string; logo?: Buffer | null; language?: string }) => {
    try {
      await updateBranding(services, { workspace: page.workspace.slug, ...input }, page.owner.session.actor);
      return null;
    } catch (error) {
      const message = fieldError(error);
      if (message === null) throw error;
      return { field, error: message, ...(input.accent === undefined ? {} : { accent: input.accent }) };
    }
  };

  app.get(base, async (request, reply) => {
    const page = await workspacePage(services, request, "branding");
    const done = (request.query as Record<string, string | undefined>).done ?? "";
    return sendPage(reply, 200, await render(page, FLASHES.includes(done) ? { flash: done as BrandingFlash } : {}));
  });

  app.post(`${base}/accent`, async (request, reply) => {
    const page = await workspacePage(services, request, "branding");
    const refused = await change(page, "accent", { accent: formField(request, "accent") });
    if (refused) return sendPage(reply, 400, await render(page, { form: refused }));
    return reply.redirect(`${brandingPath(page.frame)}?done=accent`, 303);
  });

  app.post(`${base}/language`, async (request, reply) => {
    const page = await workspacePage(services, request, "branding");
    const refused = await change(page, "language", { language: formField(request, "language") });
    if (refused) return sendPage(reply, 400, await render(page, { form: refused }));
    return reply.redirect(`${brandingPath(page.frame)}?done=language`, 303);
  });

  app.post(`${base}/logo`, async (request, reply) => {
    const page = await workspacePage(services, request, "branding");
    const file = (request.body as Record<string, unknown> | null)?.logo;
    const refused = await change(page, "logo", { logo: Buffer.isBuffer(file) ? file : Buffer.alloc(0) });
    if (refused) return sendPage(reply, 400, await render(page, { form: refused }));
    return reply.redirect(`${brandingPath(page.frame)}?done=logo`, 303);
  });

  app.post(`${base}/logo/remove`, async (request, reply) => {
    const page = await workspacePage(services, request, "branding");
    await updateBranding(services, { workspace: page.workspace.slug, logo: null }, page.owner.session.actor);
    return reply.redirect(`${brandingPath(page.frame)}?done=logo-removed`, 303);
  });
}
