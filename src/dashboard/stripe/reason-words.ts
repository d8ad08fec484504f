// Why Warden did not act on a processor's event (or what it noted while acting), in a
// sentence a vendor can act on, before the reason the ingest recorded
// (stripe/stripe-ingest.service.ts, paddle/paddle-ingest.service.ts and the billing they
// share in payments/apply-fact.service.ts), which names the processor's fields and ids and
// stays shown for a support thread or the processor's own dashboard.
import type { ProcessorName } from "../../payments/payment-processor.js";

export interface ReasonWords {
  plain: string;
  /** The reason as recorded. */
  raw: string;
}

const NAME: Record<ProcessorName, string> = { stripe: "Stripe", paddle: "Paddle" };

// First match wins: the specific reasons before the catch-all "missing fields" one.
const PLAIN: [RegExp, (processor: string) => string][] = [
  [/^Warden does not use \S+ events$/, () => "Warden does not act on this kind of event"],
  // Paddle's own: the price paid is checked against the plan its custom_data names.
  [/^no signed-in buyer/, () => "The checkout names no signed-in buyer (Warden's buy button sets one): Paddle gives the customer by id only"],
  [/^custom_data names \d+ seat\(s\), but/, () => "The seats named are not the quantity paid for: nothing was granted"],
  [
    /^custom_data names no plan, and the product has no default plan/,
    () => "The checkout names no plan and the product has no default plan: the price paid cannot be checked",
  ],
  [
    /is linked to no plan in \S+: not checked against plan /,
    () => "The price paid is linked to no plan in this environment: link it on the plan's page, then reconcile",
  ],
  [/map to \d+ different plans in \S+: not checked against plan /, () => "The checkout bought prices of different plans; Warden grants one plan a checkout"],
  [/^the price paid is linked to plan .* named in custom_data$/, () => "The price paid is another plan's than the one the checkout names: nothing was granted"],
  [/^adjustment \S+ is .*, not approved$/, (p) => `The refund or chargeback is not approved at ${p} yet; it is applied when it is`],
  [/^adjustment \S+ changes no access$/, () => "This adjustment (a credit or a warning) changes no access"],
  [/is linked to no plan$/, () => "The price bought is linked to no plan: link it on the plan's page, then reconcile"],
  [/map to \d+ different plans$/, () => "The checkout bought prices of different plans; Warden grants one plan a checkout"],
  [/^no warden_tool or warden_bundle metadata/, () => "Not a checkout Warden started: it names no tool or bundle"],
  [/^both warden_tool and warden_bundle/, () => "The checkout names both a tool and a bundle; it must name one"],
  [/^warden_seats .* is not a whole number/, () => "The checkout's number of seats cannot be read"],
  [/^no (tool|bundle) ".*" in this workspace$/, () => "The checkout names a tool or bundle this workspace does not have"],
  [/^no plan ".*" for (tool|bundle) /, () => "The checkout names a plan this product does not have"],
  [/^plan ".*" is billed \S+, not \S+$/, () => "The checkout names a plan billed another way (once, or by subscription)"],
  [/^payment is /, () => "The payment has not gone through yet; the licence follows when it does"],
  [/^checkout in \S+ mode buys nothing$/, () => "This checkout buys nothing (it only saves a card)"],
  [/^partial refund/, () => "A partial refund: the licence stands"],
  [/^no licence (was bought|or subscription invoice was paid) with this payment/, () => "No licence or subscription was paid with this payment"],
  [/the subscription keeps its product and plan$/, () => "Its price is linked to another product's plan: the subscription keeps what it gives"],
  [/: the plan stays$/, () => "Its price is linked to a plan it cannot be billed at: the plan stays"],
  [/neither a licence's nor a known subscription's$/, () => "The disputed payment is not one Warden knows"],
  [/^dispute closed with status/, () => "The dispute closed without a change to access"],
  [/^waiting for the checkout/, () => "Waiting for the checkout that names the buyer; it is applied when that arrives"],
  [/invoice\.paid has not arrived/, () => "Waiting for its invoice; the payment is linked to the subscription when that arrives"],
  // Reasons recorded with an event that was applied: what Warden noted while acting.
  [/^applied \d+ held-back subscription event/, () => "Applied, with the subscription's events that were waiting for it"],
  [/^licence of this checkout exists already$/, () => "The licence of this checkout exists already"],
  [/^older than the stored state$/, () => "Older than what Warden holds: nothing to change"],
  [/^refunded already$/, () => "Refunded already"],
  [/^revoked by a lost dispute already$/, () => "Revoked already, by a lost dispute"],
  [/buyer's address$|names its buyer$/, (p) => `${p} gave no email address for the buyer`],
  [
    /is not a whole, non-negative amount|is not a whole quantity|is not a Unix time|is not an RFC 3339 time|is not text$/,
    (p) => `${p} sent a value Warden cannot read`,
  ],
  [/contains control characters/, (p) => `${p} sent text Warden cannot store`],
  [/no longer reads as an event$/, () => "The held-back event could no longer be read"],
  [/without |^no |names no | of no |^not a JSON object$/, () => "The event lacks what Warden needs to act on it"],
];

/** The words for an event's recorded reason; a reason no rule knows keeps a general sentence. */
export function reasonWords(processor: ProcessorName, reason: string): ReasonWords {
  const plain = PLAIN.find(([pattern]) => pattern.test(reason))?.[1](NAME[processor]) ?? "Warden did not act on this event";
  return { plain, raw: reason };
}
