// The vendor's own names in other languages (issue 51, point 4): a tool's, a bundle's, a
// plan's, a feature's or a meter's name per language, optional, given under Configure.
// A hosted page in a language shows the name given for it, else the default name as the
// vendor wrote it: a name is the vendor's, never machine-translated nor guessed from a
// neighbouring language. Each name is checked as the default name is (its length, no
// NUL); all are checked before any is written. A page's names are kept in this process's
// answer cache (a page would otherwise read them on every request), dropped as the tool's
// kept terms are: a change of a name writes the access-change feed for everyone.
import { type Actor, recordAction } from "../audit/audit.service.js";
import type { Clock } from "../clock.js";
import { recordEveryoneChanged } from "../customers/access-change.store.js";
import { type AnswerCache, EVERYONE, personTag } from "../customers/answer-cache.js";
import type { Db, Executor } from "../db/database.js";
import type { ProductKind } from "../db/schema.js";
import { invalidParameter, notFound } from "../errors/errors.js";
import { LANGUAGES, type Language, type PageLocale } from "../i18n/locales.js";
import { listFeatures, listMeters } from "../usage/terms.store.js";
import { findSubjectNames, listNamesIn, type NamedKind, type NameSubject, saveSubjectNames, type TranslatedName } from "./translated-names.store.js";
import { bundleExists, findBundle, findPlan, findTool } from "./workspace.store.js";
import type { Workspace } from "./workspace.types.js";
import { requireWorkspace } from "./workspace-lookup.service.js";

export type { NamedKind, NameSubject };

/** The longest name of each kind: its default name's limit (a tool's and a plan's 200, a feature's and a meter's 100). */
const MAX_CHARS: Record<NamedKind, number> = { product: 200, plan: 200, feature: 100, meter: 100 };

/** The form field and refusal parameter of a language's name: `name_de`, `name_pt-BR`. */
export const nameParam = (language: Language) => `name_${language}`;

export interface SubjectNames {
  subject: NameSubject;
  /** The name as the vendor gave it first: what every language without its own shows. */
  defaultName: string;
  /** The names given, by language. */
  names: Partial<Record<Language, string>>;
}

/** The default name of what a subject names, or a 404 when the workspace has no such thing. */
async function defaultNameOf(db: Db, workspace: Workspace, subject: NameSubject): Promise<string> {
  const { kind, productKind, productId, itemId } = subject;
  const missing = () => notFound(`No ${kind === "product" ? productKind : kind} "${itemId || productId}" here.`);
  if (kind === "product") {
    if (itemId !== "") throw missing();
    const found = productKind === "tool" ? await findTool(db, workspace.id, productId) : await findBundle(db, workspace.id, productId);
    if (!found) throw missing();
    return found.name;
  }
  if (kind === "plan") {
    const plan = (productKind === "tool" ? await findTool(db, workspace.id, productId) : await bundleExists(db, workspace.id, productId))
      ? await findPlan(db, workspace.id, productKind, productId, itemId)
      : null;
    if (!plan) throw missing();
    return plan.name;
  }
  // Features and meters are a tool's.
  if (productKind !== "tool") throw missing();
  const declared = kind === "feature" ? await listFeatures(db, workspace.id, productId) : await listMeters(db, workspace.id, productId);
  const found = declared.find((d) => d.id === itemId);
  if (!found) throw missing();
  return found.name;
}

/** A subject's default name and the names given in other languages (Configure's form). */
export async function readSubjectNames(db: Db, input: { workspace: string; subject: NameSubject }): Promise<SubjectNames> {
  const workspace = await requireWorkspace(db, input.workspace);
  const defaultName = await defaultNameOf(db, workspace, input.subject);
  const stored = await findSubjectNames(db, workspace.id, input.subject);
  const names: Partial<Record<Language, string>> = {};
  for (const language of LANGUAGES) {
    const name = stored.get(language);
    if (name !== undefined) names[language] = name;
  }
  return { subject: input.subject, defaultName, names };
}

/**
 * Sets a subject's names in the languages given: a name, or "" to remove it (the default
 * shows again); a language not given is kept. Refused whole, nothing written, on a
 * language Warden does not speak or a name too long; audited when an owner does it.
 */
export async function setSubjectNames(
  db: Db,
  clock: Clock,
  input: { workspace: string; subject: NameSubject; names: Record<string, string> },
  actor?: Actor,
): Promise<SubjectNames> {
  const workspace = await requireWorkspace(db, input.workspace);
  await defaultNameOf(db, workspace, input.subject);
  const max = MAX_CHARS[input.subject.kind];
  const changes = new Map<string, string | null>();
  for (const [tag, raw] of Object.entries(input.names)) {
    const language = LANGUAGES.find((l) => l === tag);
    if (!language) throw invalidParameter("language", `The language must be one of ${LANGUAGES.join(", ")}; "${tag.slice(0, 40)}" is not one.`);
    const name = raw.trim();
    if (name.length > max || name.includes("\u0000")) throw invalidParameter(nameParam(language), `The name in ${language} must be at most ${max} characters.`);
    changes.set(language, name === "" ? null : name);
  }
  if (changes.size > 0) {
    await db.transaction().execute(async (trx) => {
      const now = clock.now();
      await saveSubjectNames(trx, workspace.id, input.subject, changes, now);
      // Every process's kept page names of the workspace are dropped (namesForPage): at once here, within a second elsewhere.
      await recordEveryoneChanged(trx, workspace.id, now);
      if (actor) {
        const { kind, productKind, productId, itemId } = input.subject;
        const subject = kind === "product" ? `${productKind}:${productId}` : `${productKind}:${productId}:${kind}:${itemId}`;
        await recordAction(trx, actor, { action: "names.translated", workspaceId: workspace.id, env: null, subject }, now);
      }
    });
  }
  return readSubjectNames(db, { workspace: input.workspace, subject: input.subject });
}

/** The names a hosted page shows: the vendor's in the page's language where given, else the default name passed in. */
export interface PageNames {
  product(kind: ProductKind, id: string, name: string): string;
  plan(productKind: ProductKind, productId: string, planId: string, name: string): string;
  feature(toolId: string, id: string, name: string): string;
  meter(toolId: string, id: string, name: string): string;
}

const keyOf = (kind: NamedKind, productKind: ProductKind, productId: string, itemId: string) => `${kind}\u0000${productKind}\u0000${productId}\u0000${itemId}`;

/** Names as given (an English page, a language with none): each default name unchanged. */
export const DEFAULT_NAMES: PageNames = {
  product: (_kind, _id, name) => name,
  plan: (_productKind, _productId, _planId, name) => name,
  feature: (_toolId, _id, name) => name,
  meter: (_toolId, _id, name) => name,
};

/** The names kept for a page's language: the rows as read (what the cache counts the bytes of) and the names made of them. */
interface KeptNames {
  given: TranslatedName[];
  names: PageNames;
}

const namesKey = (workspaceId: string, language: Language) => `names\u0000${workspaceId}\u0000${language}`;

/**
 * The workspace's names in a page's language (none for a locale without a catalogue
 * place): from this process's answer cache, else one read kept there under the
 * workspace's "everyone" tags of both environments, as the tool's terms are
 * (usage/terms-cache.ts): a name set or removed writes the feed for everyone, which drops
 * them at once in the writing process and within a second in every other one.
 */
export async function namesForPage(answers: AnswerCache, ex: Executor, workspaceId: string, locale: PageLocale): Promise<PageNames> {
  const language = LANGUAGES.find((l) => l === locale);
  if (!language) return DEFAULT_NAMES;
  const key = namesKey(workspaceId, language);
  // Not counted in the cache's figures: they are of the access answers.
  const kept = answers.get<KeptNames>(key, false);
  if (kept) return kept.names;
  const ticket = answers.ticket();
  const given = await listNamesIn(ex, workspaceId, language);
  const names = given.length === 0 ? DEFAULT_NAMES : namesOf(given);
  answers.set(key, { given, names } satisfies KeptNames, {
    ticket,
    tags: [personTag(workspaceId, "test", EVERYONE), personTag(workspaceId, "live", EVERYONE)],
    changesAt: null,
  });
  return names;
}

function namesOf(given: TranslatedName[]): PageNames {
  const byKey = new Map(given.map((n) => [keyOf(n.kind, n.productKind, n.productId, n.itemId), n.name]));
  const nameOf = (kind: NamedKind, productKind: ProductKind, productId: string, itemId: string, name: string) =>
    byKey.get(keyOf(kind, productKind, productId, itemId)) ?? name;
  return {
    product: (kind, id, name) => nameOf("product", kind, id, "", name),
    plan: (productKind, productId, planId, name) => nameOf("plan", productKind, productId, planId, name),
    feature: (toolId, id, name) => nameOf("feature", "tool", toolId, id, name),
    meter: (toolId, id, name) => nameOf("meter", "tool", toolId, id, name),
  };
}
