// Scenario 3: list customers in pages of 500, first page to last reachable page (the
// newest 2,000 holders and 2,000 signed-in members: 4,000 rows), one request at a time
// as a vendor's export would, timing each page from request to the last byte.

export interface ListWalkResult {
  walks: number;
  pagesPerWalk: number;
  rowsPerWalk: number;
  pageSize: number;
  /** Median time of page n (0-based) over the walks, in ms. */
  pageP50Ms: number[];
  firstPageMs: { p50: number; p90: number };
  lastPageMs: { p50: number; p90: number };
  walkMs: { p50: number; p90: number };
  /** Last page's median over the first page's: the target is at most 1.5. */
  lastOverFirst: number;
}

function quantile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;
}

interface Page {
  data: unknown[];
  has_more: boolean;
  next_cursor: string | null;
}

async function walkOnce(url: string, key: string, tool: string, pageSize: number): Promise<{ pageMs: number[]; rows: number }> {
  const pageMs: number[] = [];
  let rows = 0;
  let cursor: string | null = null;
  do {
    const query = new URLSearchParams({ limit: String(pageSize) });
    if (cursor !== null) query.set("cursor", cursor);
    const started = performance.now();
    const response = await fetch(`${url}/api/v1/tools/${tool}/customers?${query}`, { headers: { authorization: `Bearer ${key}` } });
    const text = await response.text();
    pageMs.push(performance.now() - started);
    if (response.status !== 200) throw new Error(`list customers answered ${response.status}: ${text.slice(0, 500)}`);
    const page = JSON.parse(text) as Page;
    rows += page.data.length;
    cursor = page.has_more ? page.next_cursor : null;
  } while (cursor !== null);
  return { pageMs, rows };
}

export async function measureListWalk(options: {
  url: string;
  key: string;
  tool: string;
  walks: number;
  warmupWalks: number;
  pageSize: number;
}): Promise<ListWalkResult> {
  for (let i = 0; i < options.warmupWalks; i++) await walkOnce(options.url, options.key, options.tool, options.pageSize);
  const walks: { pageMs: number[]; rows: number }[] = [];
  for (let i = 0; i < options.walks; i++) walks.push(await walkOnce(options.url, options.key, options.tool, options.pageSize));
  const first = walks[0];
  if (!first) throw new Error("no walks");
  const pages = first.pageMs.length;
  if (walks.some((w) => w.pageMs.length !== pages)) throw new Error("walks of the list differ in length; did the list change during the run?");
  const pageP50Ms = Array.from({ length: pages }, (_, n) =>
    quantile(
      walks.map((w) => w.pageMs[n] ?? Number.NaN),
      50,
    ),
  );
  const column = (n: number) => walks.map((w) => w.pageMs[n] ?? Number.NaN);
  const totals = walks.map((w) => w.pageMs.reduce((a, b) => a + b, 0));
  const firstPage = { p50: quantile(column(0), 50), p90: quantile(column(0), 90) };
  const lastPage = { p50: quantile(column(pages - 1), 50), p90: quantile(column(pages - 1), 90) };
  return {
    walks: walks.length,
    pagesPerWalk: pages,
    rowsPerWalk: first.rows,
    pageSize: options.pageSize,
    pageP50Ms,
    firstPageMs: firstPage,
    lastPageMs: lastPage,
    walkMs: { p50: quantile(totals, 50), p90: quantile(totals, 90) },
    lastOverFirst: lastPage.p50 / firstPage.p50,
  };
}
