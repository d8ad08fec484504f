// Where a processor id opens in Stripe's dashboard: the page of a payment, an invoice, a
// dispute or a subscription, under `/test/` for the test environment (Stripe keeps test
// objects apart there). An id Stripe never made (a test purchase from the command line,
// `pi_warden_test_…`) or of a shape Stripe's dashboard has no page for gets no link.
import type { Env } from "../../db/schema.js";
import { isTestPurchasePayment } from "../../stripe/test-purchase.types.js";

const PAGES: [prefix: string, page: string][] = [
  ["pi_", "payments"],
  ["in_", "invoices"],
  ["du_", "disputes"],
  ["dp_", "disputes"],
  ["sub_", "subscriptions"],
];

export function stripeDashboardLink(env: Env, id: string): string | null {
  if (isTestPurchasePayment(id)) return null;
  const page = PAGES.find(([prefix]) => id.startsWith(prefix))?.[1];
  if (page === undefined) return null;
  return `https://dashboard.stripe.com${env === "test" ? "/test" : ""}/${page}/${encodeURIComponent(id)}`;
}
