// SQL of a workspace's branding (`workspace_brands`, migration 024). The logo's bytes are
// read only by the logo's own route; everything else reads the row without them.
import type { Executor } from "../db/database.js";
import type { WorkspaceBrandsTable } from "../db/schema.js";
import { LANGUAGES, type Language } from "../i18n/locales.js";

export type LogoType = NonNullable<WorkspaceBrandsTable["logo_type"]>;

/** What a page needs of the branding: the logo's bytes stay in the database. */
export interface Brand {
  accent: string | null;
  logoType: LogoType | null;
  version: number;
  /** The pages' language when the buyer's browser names none Warden speaks; null: English. */
  language: Language | null;
}

export interface StoredLogo {
  bytes: Buffer;
  type: LogoType;
  version: number;
}

export async function findBrand(ex: Executor, workspaceId: string): Promise<Brand | null> {
  const r = await ex
    .selectFrom("workspace_brands")
    .select(["accent", "logo_type", "version", "language"])
    .where("workspace_id", "=", workspaceId)
    .executeTakeFirst();
  return r ? { accent: r.accent, logoType: r.logo_type, version: Number(r.version), language: languageOf(r.language) } : null;
}

/** A stored language Warden still speaks, else none (a language is never dropped today; if one were, its workspaces read English). */
const languageOf = (stored: string | null): Language | null => ((LANGUAGES as readonly (string | null)[]).includes(stored) ? (stored as Language) : null);

export async function findLogo(ex: Executor, workspaceId: string): Promise<StoredLogo | null> {
  const r = await ex.selectFrom("workspace_brands").select(["logo", "logo_type", "version"]).where("workspace_id", "=", workspaceId).executeTakeFirst();
  if (!r?.logo || !r.logo_type) return null;
  return { bytes: Buffer.from(r.logo), type: r.logo_type, version: Number(r.version) };
}

/** Writes what changed (a field left undefined keeps its value) under a version greater than the last. */
export async function saveBrand(
  ex: Executor,
  workspaceId: string,
  change: { accent?: string | null; logo?: { bytes: Buffer; type: LogoType } | null; language?: Language | null },
  at: { version: number; now: number },
): Promise<void> {
  const values = {
    ...(change.accent === undefined ? {} : { accent: change.accent }),
    ...(change.logo === undefined ? {} : { logo: change.logo?.bytes ?? null, logo_type: change.logo?.type ?? null }),
    ...(change.language === undefined ? {} : { language: change.language }),
    version: at.version,
    updated_at: at.now,
  };
  await ex
    .insertInto("workspace_brands")
    .values({ workspace_id: workspaceId, accent: null, logo: null, logo_type: null, language: null, ...values })
    .onConflict((oc) => oc.column("workspace_id").doUpdateSet(values))
    .execute();
}
