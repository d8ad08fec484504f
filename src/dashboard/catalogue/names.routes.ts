// Catalogue › a name in other languages: the page of each tool, bundle, plan, feature and
// meter's names per language (`readSubjectNames`, `setSubjectNames`: the use cases of
// `warden admin names set`), audited with the owner as actor.
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { ProductKind } from "../../db/schema.js";
import { LANGUAGES } from "../../i18n/locales.js";
import type { Services } from "../../services.js";
import { type NamedKind, type NameSubject, nameParam, readSubjectNames, setSubjectNames } from "../../workspaces/translated-names.service.js";
import type { Crumb } from "../shared/layout.js";
import { workspacePage } from "../shared/owner-context.js";
import { fieldRefusal, sendPage } from "../shared/page.js";
import { formField } from "../shared/security.js";
import { type NamesPlace, namesView } from "./names.views.js";
import { planPath, productPath } from "./plans.views.js";

/** The addresses of the names pages, under their product's page: the product itself, a plan, a feature, a meter. */
const PLACES: { productKind: ProductKind; kind: NamedKind; path: string }[] = [
  { productKind: "tool", kind: "product", path: "/w/:workspace/:env/tools/:product/names" },
  { productKind: "bundle", kind: "product", path: "/w/:workspace/:env/bundles/:product/names" },
  { productKind: "tool", kind: "plan", path: "/w/:workspace/:env/tools/:product/plans/:item/names" },
  { productKind: "bundle", kind: "plan", path: "/w/:workspace/:env/bundles/:product/plans/:item/names" },
  { productKind: "tool", kind: "feature", path: "/w/:workspace/:env/tools/:product/features/:item/names" },
  { productKind: "tool", kind: "meter", path: "/w/:workspace/:env/tools/:product/meters/:item/names" },
];

export async function nameRoutes(app: FastifyInstance, options: { services: Services }): Promise<void> {
  const { services } = options;
  const { db, clock } = services;

  for (const place of PLACES) {
    const open = async (request: FastifyRequest) => {
      const page = await workspacePage(services, request, place.productKind === "tool" ? "tools" : "bundles");
      const params = request.params as { product: string; item?: string };
      const subject: NameSubject = { kind: place.kind, productKind: place.productKind, productId: params.product, itemId: params.item ?? "" };
      // Refuses (404) a subject the workspace does not have before anything is shown or written.
      const names = await readSubjectNames(db, { workspace: page.workspace.slug, subject });
      const product = { kind: place.productKind, id: subject.productId };
      const productHref = productPath(page.frame, product);
      const self = subject.kind === "product" ? productHref : subject.kind === "plan" ? planPath(page.frame, product, subject.itemId) : productHref;
      const trail: Crumb[] = [];
      if (subject.kind !== "product") trail.push({ label: subject.productId, href: productHref });
      trail.push({ label: names.defaultName, href: subject.kind === "feature" || subject.kind === "meter" ? `${productHref}#usage` : self });
      const where: NamesPlace = {
        what: subject.kind === "product" ? place.productKind : subject.kind,
        path: `${subject.kind === "product" ? productHref : subject.kind === "plan" ? self : `${productHref}/${subject.kind}s/${encodeURIComponent(subject.itemId)}`}/names`,
        trail,
        back: { label: `Back to ${names.defaultName}`, href: trail[trail.length - 1]?.href ?? productHref },
      };
      return { page, subject, names, where };
    };

    app.get(place.path, async (request, reply) => {
      const { page, names, where } = await open(request);
      const saved = (request.query as Record<string, string | undefined>).saved === "1";
      return sendPage(reply, 200, namesView(page.frame, where, names, { saved }));
    });

    app.post(place.path, async (request, reply) => {
      const { page, subject, names, where } = await open(request);
      const typed = Object.fromEntries(LANGUAGES.map((language) => [nameParam(language), formField(request, nameParam(language))]));
      try {
        await setSubjectNames(
          db,
          clock,
          { workspace: page.workspace.slug, subject, names: Object.fromEntries(LANGUAGES.map((language) => [language, typed[nameParam(language)] ?? ""])) },
          page.owner.session.actor,
        );
      } catch (error) {
        const refusal = fieldRefusal(error);
        if (refusal === null) throw error;
        return sendPage(reply, 400, namesView(page.frame, where, names, { form: { typed, ...refusal } }));
      }
      return reply.redirect(`${where.path}?saved=1`, 303);
    });
  }
}
