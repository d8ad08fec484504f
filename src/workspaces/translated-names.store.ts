// SQL of the vendor's names in other languages (`translated_names`, migration 049): a
// subject's names in every language, for Configure; a workspace's in one language, for
// a hosted page (one range of the key: workspace, language).
import type { Executor } from "../db/database.js";
import type { ProductKind, TranslatedNamesTable } from "../db/schema.js";

export type NamedKind = TranslatedNamesTable["kind"];

/** What a name names: a tool or bundle itself (`item` ""), or one of its plans, features or meters. */
export interface NameSubject {
  kind: NamedKind;
  productKind: ProductKind;
  productId: string;
  itemId: string;
}

export interface TranslatedName extends NameSubject {
  name: string;
}

const ofSubject = (subject: NameSubject) => ({
  kind: subject.kind,
  product_kind: subject.productKind,
  product_id: subject.productId,
  item_id: subject.itemId,
});

/** A subject's names by language. */
export async function findSubjectNames(ex: Executor, workspaceId: string, subject: NameSubject): Promise<Map<string, string>> {
  const rows = await ex
    .selectFrom("translated_names")
    .select(["language", "name"])
    .where("workspace_id", "=", workspaceId)
    .where("kind", "=", subject.kind)
    .where("product_kind", "=", subject.productKind)
    .where("product_id", "=", subject.productId)
    .where("item_id", "=", subject.itemId)
    .execute();
  return new Map(rows.map((r) => [r.language, r.name]));
}

/** Sets a subject's name in each language given (null removes it); the others are kept. */
export async function saveSubjectNames(ex: Executor, workspaceId: string, subject: NameSubject, names: Map<string, string | null>, now: number): Promise<void> {
  for (const [language, name] of names) {
    const key = { workspace_id: workspaceId, language, ...ofSubject(subject) };
    if (name === null) {
      await ex
        .deleteFrom("translated_names")
        .where("workspace_id", "=", workspaceId)
        .where("language", "=", language)
        .where("kind", "=", subject.kind)
        .where("product_kind", "=", subject.productKind)
        .where("product_id", "=", subject.productId)
        .where("item_id", "=", subject.itemId)
        .execute();
    } else {
      await ex
        .insertInto("translated_names")
        .values({ ...key, name, updated_at: now })
        .onConflict((oc) => oc.columns(["workspace_id", "language", "kind", "product_kind", "product_id", "item_id"]).doUpdateSet({ name, updated_at: now }))
        .execute();
    }
  }
}

/** Every name a workspace gave in one language: what a hosted page in it may show. */
export async function listNamesIn(ex: Executor, workspaceId: string, language: string): Promise<TranslatedName[]> {
  const rows = await ex
    .selectFrom("translated_names")
    .select(["kind", "product_kind", "product_id", "item_id", "name"])
    .where("workspace_id", "=", workspaceId)
    .where("language", "=", language)
    .execute();
  return rows.map((r) => ({ kind: r.kind, productKind: r.product_kind, productId: r.product_id, itemId: r.item_id, name: r.name }));
}
