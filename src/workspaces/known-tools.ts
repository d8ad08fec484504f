import type { Executor } from "../db/database.js";
import { findTool } from "./workspace.store.js";

// Far more tools than any deployment has; past it the memory starts again empty.
const MAX_REMEMBERED = 100_000;

/**
 * The tools this process has seen exist, so that the request path checks a set instead
 * of running a query. Nothing removes a tool (no command or route deletes one), so a tool
 * seen once exists for good and no other process can make this memory stale. A tool not
 * seen yet is looked up every time: another process may have created it since.
 */
export class KnownTools {
  private readonly seen = new Set<string>();

  async exists(ex: Executor, workspaceId: string, toolId: string): Promise<boolean> {
    const key = `${workspaceId}\u0000${toolId}`;
    if (this.seen.has(key)) return true;
    if (!(await findTool(ex, workspaceId, toolId))) return false;
    if (this.seen.size >= MAX_REMEMBERED) this.seen.clear();
    this.seen.add(key);
    return true;
  }
}
