import type { Db } from "../db/database.js";
import { isStorageFull } from "../db/storage-faults.js";
import { type Activity, recordActivity, utcDayOf } from "./rollup.store.js";

// The access check counts its device's first check of each UTC day towards the use
// figures. The decision is the insert of the device's day (rollup.store.ts), so it is
// exact across processes; this memory only spares the later checks of the day a write.
// Bound: past this many devices it starts again empty (a forgotten device costs one
// insert that changes nothing).
const MAX_REMEMBERED = 200_000;
const countedDay = new WeakMap<Db, Map<string, string>>();

export async function countActivity(db: Db, a: Activity): Promise<void> {
  const day = utcDayOf(a.at);
  let seen = countedDay.get(db);
  if (seen?.get(a.deviceId) === day) return;
  try {
    await db.transaction().execute((trx) => recordActivity(trx, a));
  } catch (error) {
    // While the disk is full the check still answers (db/storage-faults.ts); the day is not
    // remembered, so a later check of the same day counts it once there is room.
    if (isStorageFull(error)) return;
    throw error;
  }
  if (!seen || seen.size >= MAX_REMEMBERED) {
    seen = new Map();
    countedDay.set(db, seen);
  }
  seen.set(a.deviceId, day);
}
