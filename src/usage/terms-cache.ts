// What a tool declares and its top terms (loadToolTerms: three queries), kept in this
// process's answer cache so that the access answers (retrieve, the access check, a
// feature's check) do not read them each time. Kept under the workspace's "everyone"
// tags of both environments: every change of features, meters or a plan's terms writes
// the access-change feed for everyone (recordEveryoneChanged), which drops them at once
// in the writing process and within a second in every other one (the access watch's read
// of the feed), exactly as it drops the people's answers; while the feed is not read the
// cache answers nothing and the terms are read each time (customers/answer-cache.ts).
import { type AnswerCache, EVERYONE, personTag } from "../customers/answer-cache.js";
import type { Executor } from "../db/database.js";
import { loadToolTerms } from "./terms.store.js";
import type { ToolTerms } from "./usage.types.js";

const termsKey = (workspaceId: string, toolId: string) => `terms\u0000${workspaceId}\u0000${toolId}`;

/** The tool's terms from the answer cache, else read and kept there until the workspace's terms change. */
export async function cachedToolTerms(answers: AnswerCache, ex: Executor, workspaceId: string, toolId: string): Promise<ToolTerms> {
  const key = termsKey(workspaceId, toolId);
  // Not counted in the cache's figures: they are of the answers, each of which reads these.
  const kept = answers.get<ToolTerms>(key, false);
  if (kept) return kept;
  const ticket = answers.ticket();
  const terms = await loadToolTerms(ex, workspaceId, toolId);
  // The terms are the workspace's, whatever the environment: a change noted for either drops them.
  answers.set(key, terms, { ticket, tags: [personTag(workspaceId, "test", EVERYONE), personTag(workspaceId, "live", EVERYONE)], changesAt: null });
  return terms;
}
