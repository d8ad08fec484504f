import type { Executor } from "../db/database.js";
import type { Env } from "../db/schema.js";

export interface StoredEvent {
  workspaceId: string;
  env: Env;
  id: string;
  type: string;
  /** The exact JSON text that is signed and sent. */
  body: string;
  example: boolean;
  createdAt: number;
  /** Whom it is about: the customer the dashboard's lists name and filter by; null for an example. */
  personId: string | null;
}

/** Writes the event unless one with its id exists; answers whether this call wrote it. */
export async function insertEventOnce(ex: Executor, event: StoredEvent): Promise<boolean> {
  const inserted = await ex
    .insertInto("events")
    .values({
      workspace_id: event.workspaceId,
      env: event.env,
      id: event.id,
      type: event.type,
      body: event.body,
      example: event.example ? 1 : 0,
      created_at: event.createdAt,
      person_id: event.personId,
    })
    .onConflict((oc) => oc.columns(["workspace_id", "env", "id"]).doNothing())
    .returning("id")
    .executeTakeFirst();
  return inserted !== undefined;
}

const toEvent = (r: {
  workspace_id: string;
  env: Env;
  id: string;
  type: string;
  body: string;
  example: number;
  created_at: number;
  person_id: string | null;
}): StoredEvent => ({
  workspaceId: r.workspace_id,
  env: r.env,
  id: r.id,
  type: r.type,
  body: r.body,
  example: r.example === 1,
  createdAt: Number(r.created_at),
  personId: r.person_id,
});

/** One event of a workspace environment, or null. */
export async function findEvent(ex: Executor, workspaceId: string, env: Env, id: string): Promise<StoredEvent | null> {
  const row = await ex.selectFrom("events").selectAll().where("workspace_id", "=", workspaceId).where("env", "=", env).where("id", "=", id).executeTakeFirst();
  return row ? toEvent(row) : null;
}

/** The types of the events of a workspace environment with these ids; an id it does not hold is left out. */
export async function findEventTypes(ex: Executor, workspaceId: string, env: Env, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await ex
    .selectFrom("events")
    .select(["id", "type"])
    .where("workspace_id", "=", workspaceId)
    .where("env", "=", env)
    .where("id", "in", [...new Set(ids)])
    .execute();
  return new Map(rows.map((r) => [r.id, r.type]));
}

/** What the dashboard's lists show of an event: its type, its JSON text, and the address of the person it is about (null when none is recorded). */
export interface EventGist {
  type: string;
  body: string;
  email: string | null;
}

/** The gist of each of these events of a workspace environment, by id; one statement. */
export async function findEventGists(ex: Executor, workspaceId: string, env: Env, ids: readonly string[]): Promise<Map<string, EventGist>> {
  if (ids.length === 0) return new Map();
  const rows = await ex
    .selectFrom("events as e")
    .leftJoin("people as p", "p.id", "e.person_id")
    .select(["e.id", "e.type", "e.body", "p.email"])
    .where("e.workspace_id", "=", workspaceId)
    .where("e.env", "=", env)
    .where("e.id", "in", [...new Set(ids)])
    .execute();
  return new Map(rows.map((r) => [r.id, { type: r.type, body: r.body, email: r.email }]));
}

export interface Position {
  createdAt: number;
  id: string;
}

/** Events newest first, after a keyset position. */
export async function listEventsPage(
  ex: Executor,
  workspaceId: string,
  env: Env,
  options: { after: Position | null; limit: number; type?: string; since?: number; before?: number; personId?: string },
): Promise<StoredEvent[]> {
  let query = ex.selectFrom("events").selectAll().where("workspace_id", "=", workspaceId).where("env", "=", env);
  if (options.type) query = query.where("type", "=", options.type);
  // One person's events walk their own index (events_person, migration 046).
  if (options.personId !== undefined) query = query.where("person_id", "=", options.personId);
  // Created at or after `since`, before `before`: a range of the same index the order walks.
  if (options.since !== undefined) query = query.where("created_at", ">=", options.since);
  if (options.before !== undefined) query = query.where("created_at", "<", options.before);
  const { after } = options;
  if (after) {
    query = query.where((eb) => eb.or([eb("created_at", "<", after.createdAt), eb.and([eb("created_at", "=", after.createdAt), eb("id", "<", after.id)])]));
  }
  const rows = await query.orderBy("created_at", "desc").orderBy("id", "desc").limit(options.limit).execute();
  return rows.map(toEvent);
}

/** The newest events of these types, examples left out: the overview's recent activity (index `events_list`, newest first). */
export async function listRecentEvents(ex: Executor, workspaceId: string, env: Env, types: readonly string[], limit: number): Promise<StoredEvent[]> {
  const rows = await ex
    .selectFrom("events")
    .selectAll()
    .where("workspace_id", "=", workspaceId)
    .where("env", "=", env)
    .where("type", "in", types)
    .where("example", "=", 0)
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .limit(limit)
    .execute();
  return rows.map(toEvent);
}
