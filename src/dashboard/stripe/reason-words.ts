// Why Warden did not act on an event from Stripe, in a sentence a vendor can act on, before
// the reason the ingest recorded (stripe/stripe-ingest.service.ts), which names Stripe's
// fields and ids and stays shown for a support thread or Stripe's own dashboard.

export interface ReasonWords {
  plain: string;
  /** The reason as recorded. */
  raw: string;
}

// First match wins: the specific reasons before the catch-all "missing fields" one.
const PLAIN: [RegExp, string][] = [
  [/^Warden does not use \S+ events$/, "Warden does not act on this kind of event"],
  [/is linked to no plan$/, "The price bought is linked to no plan: link it on the plan's page, then reconcile"],
  [/map to \d+ different plans$/, "The checkout bought prices of different plans; Warden grants one plan a checkout"],
  [/^no warden_tool or warden_bundle metadata/, "Not a checkout Warden started: it names no tool or bundle"],
  [/^both warden_tool and warden_bundle/, "The checkout names both a tool and a bundle; it must name one"],
  [/^warden_seats .* is not a whole number/, "The checkout's number of seats cannot be read"],
  [/^payment is /, "The payment has not gone through yet; the licence follows when it does"],
  [/^checkout in \S+ mode buys nothing$/, "This checkout buys nothing (it only saves a card)"],
  [/^partial refund/, "A partial refund: the licence stands"],
  [/^no licence (was bought|or subscription invoice was paid) with this payment/, "No licence or subscription was paid with this payment"],
  [/the subscription keeps its product and plan$/, "Its price is linked to another product's plan: the subscription keeps what it gives"],
  [/: the plan stays$/, "Its price is linked to a plan it cannot be billed at: the plan stays"],
  [/neither a licence's nor a known subscription's$/, "The disputed payment is not one Warden knows"],
  [/^dispute closed with status/, "The dispute closed without a change to access"],
  [/^waiting for the checkout/, "Waiting for the checkout that names the buyer; it is applied when that arrives"],
  [/invoice\.paid has not arrived/, "Waiting for its invoice; the payment is linked to the subscription when that arrives"],
  [/buyer's address$|names its buyer$/, "Stripe gave no email address for the buyer"],
  [/is not a whole, non-negative amount|is not a Unix time|is not text$/, "Stripe sent a value Warden cannot read"],
  [/contains control characters/, "Stripe sent text Warden cannot store"],
  [/no longer reads as an event$/, "The held-back event could no longer be read"],
  [/without |^no |names no | of no |^not a JSON object$/, "The event lacks what Warden needs to act on it"],
];

/** The words for an event's recorded reason; a reason no rule knows keeps a general sentence. */
export function stripeReasonWords(reason: string): ReasonWords {
  const plain = PLAIN.find(([pattern]) => pattern.test(reason))?.[1] ?? "Warden did not act on this event";
  return { plain, raw: reason };
}
