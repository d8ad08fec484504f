// Changing the tools a bundle names. Entitlement reads a bundle's tools on every check,
// so the change gives or takes access at once to everyone who bought the bundle: the
// use case says who before it is confirmed (`apply: false`), and applies it with the
// customer lists brought up to date in the same transaction.
import type { Actor } from "../audit/audit.service.js";
import { recordAction } from "../audit/audit.service.js";
import { recordEveryoneChanged } from "../customers/access-change.store.js";
import { entitledAmong, syncCustomers, toolScope } from "../customers/customer.service.js";
import { listProductBuyers } from "../customers/customer.store.js";
import type { Executor } from "../db/database.js";
import type { Env } from "../db/schema.js";
import { invalidParameter } from "../errors/errors.js";
import type { Services } from "../services.js";
import { requireBundleTools } from "./workspace.service.js";
import { listTools, replaceBundleTools } from "./workspace.store.js";
import type { Bundle } from "./workspace.types.js";
import { requireBundle } from "./workspace-lookup.service.js";

/**
 * Buyers counted per environment before a change is confirmed. Past this the counts
 * are of the first ones only (said as "at least"): the answer stays quick whatever the
 * bundle sold. Applying the change brings every buyer's customer rows up to date.
 */
export const COUNTED_BUYERS = 10_000;
// People a statement reads or writes at once when counting and applying.
const BATCH = 500;

export interface ToolConsequence {
  toolId: string;
  toolName: string;
  /** People who hold the tool after the change and did not before (added), or the reverse (removed). */
  people: number;
}

export interface EnvConsequence {
  env: Env;
  /** People who bought the bundle, counted up to one past the bound (COUNTED_BUYERS). */
  buyers: number;
  /** Whether every buyer was counted; otherwise the figures are at least these. */
  complete: boolean;
  gain: ToolConsequence[];
  lose: ToolConsequence[];
}

export interface BundleChange {
  bundle: Bundle;
  /** The tools it named before. */
  before: string[];
  added: string[];
  removed: string[];
  consequences: EnvConsequence[];
  applied: boolean;
}

/** Thrown to roll the counting transaction back: a preview leaves nothing behind. */
class Preview {
  constructor(readonly change: BundleChange) {}
}

async function entitledIn(trx: Executor, scope: { workspaceId: string; env: Env }, toolId: string, people: string[], now: number): Promise<Set<string>> {
  const held = new Set<string>();
  for (let i = 0; i < people.length; i += BATCH) {
    for (const personId of await entitledAmong(trx, toolScope(scope.workspaceId, scope.env, toolId), people.slice(i, i + BATCH), now)) held.add(personId);
  }
  return held;
}

/**
 * Names a new set of tools for a bundle. With `apply: false` nothing changes: the
 * answer says, per environment, how many of the bundle's buyers gain or lose each tool
 * (someone who holds a removed tool another way, by its own licence, a grant or a trial,
 * loses nothing). It is counted by making the change in a transaction, reading
 * entitlement before and after with the API's own rule, and rolling it back; applying
 * does the same and commits, with every buyer's customer rows brought up to date.
 */
export async function changeBundleTools(
  services: Services,
  input: { workspace: string; id: string; toolIds: string[]; apply: boolean /** COUNTED_BUYERS unless given (tests give a small one). */; countUpTo?: number },
  actor?: Actor,
): Promise<BundleChange> {
  const { db, clock } = services;
  const { workspace, bundle } = await requireBundle(db, { workspace: input.workspace, id: input.id });
  const toolIds = await requireBundleTools(db, workspace.id, input.toolIds);
  const added = toolIds.filter((t) => !bundle.toolIds.includes(t));
  const removed = bundle.toolIds.filter((t) => !toolIds.includes(t));
  if (added.length === 0 && removed.length === 0) throw invalidParameter("tools", `Bundle "${bundle.id}" names these tools already: nothing to change.`);
  const names = new Map((await listTools(db, workspace.id)).map((t) => [t.id, t.name]));
  const now = clock.now();
  const product = { kind: "bundle" as const, id: bundle.id };
  const countUpTo = input.countUpTo ?? COUNTED_BUYERS;

  try {
    return await db.transaction().execute(async (trx) => {
      const counted = new Map<Env, { buyers: string[]; before: Map<string, Set<string>> }>();
      for (const env of ["live", "test"] as const) {
        const scope = { workspaceId: workspace.id, env };
        const buyers = await listProductBuyers(trx, scope, product, { limit: countUpTo + 1, afterPersonId: null });
        const sample = buyers.slice(0, countUpTo);
        const before = new Map<string, Set<string>>();
        for (const toolId of [...added, ...removed]) before.set(toolId, await entitledIn(trx, scope, toolId, sample, now));
        counted.set(env, { buyers, before });
      }

      await replaceBundleTools(trx, workspace.id, bundle.id, { added, removed });

      const consequences: EnvConsequence[] = [];
      for (const [env, { buyers, before }] of counted) {
        const scope = { workspaceId: workspace.id, env };
        const sample = buyers.slice(0, countUpTo);
        const difference = async (toolId: string, gained: boolean): Promise<ToolConsequence> => {
          const after = await entitledIn(trx, scope, toolId, sample, now);
          const was = before.get(toolId) ?? new Set();
          const people = gained ? [...after].filter((p) => !was.has(p)).length : [...was].filter((p) => !after.has(p)).length;
          return { toolId, toolName: names.get(toolId) ?? toolId, people };
        };
        const gain: ToolConsequence[] = [];
        for (const toolId of added) gain.push(await difference(toolId, true));
        const lose: ToolConsequence[] = [];
        for (const toolId of removed) lose.push(await difference(toolId, false));
        consequences.push({ env, buyers: buyers.length, complete: buyers.length <= countUpTo, gain, lose });
      }
      const change: BundleChange = { bundle: { ...bundle, toolIds }, before: bundle.toolIds, added, removed, consequences, applied: input.apply };
      if (!input.apply) throw new Preview(change);

      // Every buyer, not only those counted: the customer lists must agree with entitlement.
      for (const env of ["live", "test"] as const) {
        let after: string | null = null;
        for (;;) {
          const batch = await listProductBuyers(trx, { workspaceId: workspace.id, env }, product, { limit: BATCH, afterPersonId: after });
          for (const toolId of [...added, ...removed]) await syncCustomers(trx, toolScope(workspace.id, env, toolId), batch, now);
          if (batch.length < BATCH) break;
          after = batch[batch.length - 1] ?? null;
        }
      }
      // A tool's top terms count the plans of the bundles that name it: kept in every
      // process under the workspace's "everyone" tags (usage/terms-cache.ts).
      await recordEveryoneChanged(trx, workspace.id, now);
      if (actor) await recordAction(trx, actor, { action: "bundle.tools_changed", workspaceId: workspace.id, env: null, subject: bundle.id }, now);
      return change;
    });
  } catch (error) {
    if (error instanceof Preview) return error.change;
    throw error;
  }
}
