// What an answer cache entry weighs in V8's heap, against the bytes the cache counts for it
// (customers/answer-cache.ts, ENTRY_OVERHEAD). Fills a cache with retrieve answers of a
// given number of licences and compares the heap before and after:
//   node --expose-gc --import tsx bench/answer-cache-heap.ts [--entries 100000] [--licences 0,1,4]
import { parseArgs } from "node:util";
import { ManualClock } from "../src/clock.js";
import { AnswerCache, tagsOf } from "../src/customers/answer-cache.js";

const { values } = parseArgs({ options: { entries: { type: "string", default: "100000" }, licences: { type: "string", default: "0,1,4" } } });
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with node --expose-gc");
const entries = Number(values.entries);
const workspaceId = `ws_${"x".repeat(22)}`;

const licence = (i: number) => ({
  id: `lic_${String(i).padStart(22, "0")}`,
  status: "active",
  purchasedAt: 1_764_000_000_000 + i,
  seats: null,
  teamLicenceStatus: null,
  teamSubscriptionRunning: null,
  plan: { id: "pln_monthly", name: "Pro" },
  createdAt: 1_764_000_000_000,
});

for (const licences of values.licences.split(",").map(Number)) {
  const cache = new AnswerCache(64 * 1024 ** 3, new ManualClock());
  cache.listen(true);
  gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < entries; i++) {
    // Parsed from JSON, as a driver's rows are built from the wire: no strings shared between entries.
    const answer = JSON.parse(
      JSON.stringify({
        person: { id: `per_${String(i).padStart(22, "0")}`, email: `customer${i}@example.com`, signedInAt: null },
        sources: { licences: Array.from({ length: licences }, () => licence(i)), subscriptions: [], grants: [] },
      }),
    );
    const key = `retrieve\u0000${workspaceId}\u0000live\u0000tabmaster\u0000customer${i}@example.com`;
    cache.set(key, answer, { ticket: cache.ticket(), tags: tagsOf(workspaceId, "live", answer.person.id), changesAt: null });
  }
  gc();
  const heap = (process.memoryUsage().heapUsed - before) / entries;
  const counted = cache.stats.bytes / entries;
  console.log(`${licences} licence(s): ${heap.toFixed(0)} bytes an entry in the heap, ${counted.toFixed(0)} counted (${(counted / heap).toFixed(2)}×)`);
  cache.close();
}
