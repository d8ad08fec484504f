// An allowance that ran out: the spend that used the last unit of a person's allowance of
// a meter for its period notes it for Insights' list and emits `usage.allowance_ran_out`,
// in its own transaction, once per person, meter and period (decisions.md, "Usage in
// Insights"). Only such a spend comes here: the other spends write nothing more.
import { toIso } from "../clock.js";
import type { ToolScope } from "../customers/customer.store.js";
import { findPeopleByIds } from "../customers/person.store.js";
import type { Executor } from "../db/database.js";
import { emitEvent } from "../events/event.service.js";
import { derivedId } from "../ids.js";
import type { MeterState } from "./meter-usage.js";
import type { MeterUsage } from "./usage.schema.js";
import { type MeterKey, recordRunOut } from "./usage.store.js";

/** True when the spend took the allowance from something left to nothing left. */
export function ranOut(before: MeterUsage, after: MeterUsage): boolean {
  return before.allowance_remaining > 0 && after.allowance_remaining === 0;
}

/**
 * The period of the person's allowances: each source's with its period's start. A reset,
 * or a source added (a plan bought after the free allowance ran out), is a new period,
 * and running out of it is news again; a plan's terms raised within it are not.
 */
export function periodOf(state: MeterState): string {
  return state.buckets
    .map((b) => `${b.bucket}@${b.periodStart}`)
    .sort()
    .join(",");
}

export async function noteRunOut(trx: Executor, scope: ToolScope, key: MeterKey, state: MeterState, after: MeterUsage, now: number): Promise<void> {
  const period = periodOf(state);
  // Buckets come soonest reset first, and a run-out has at least one.
  const resetsAt = state.buckets[0]?.periodEnd ?? now;
  if (!(await recordRunOut(trx, key, period, now, resetsAt))) return;
  const person = (await findPeopleByIds(trx, [key.personId])).get(key.personId);
  if (!person) throw new Error(`person ${key.personId} vanished`);
  await emitEvent(trx, {
    workspaceId: scope.workspaceId,
    env: scope.env,
    id: derivedId("evt", `${scope.workspaceId}|${scope.env}|usage.allowance_ran_out|${key.personId}|${key.toolId}|${key.meterId}|${period}`),
    type: "usage.allowance_ran_out",
    data: {
      tool: key.toolId,
      meter: key.meterId,
      email: person.email,
      user_id: key.personId,
      allowance: after.allowance,
      credits: after.credits,
      resets_at: toIso(resetsAt),
    },
    createdAt: now,
    personId: key.personId,
  });
}
