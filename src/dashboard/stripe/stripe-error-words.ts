// What went wrong when Warden asked Stripe for something (a refund, a cancellation, a
// reconcile's reading), in a sentence a vendor can act on, before Stripe's own answer: its
// code and message stay shown, since they are what Stripe's logs and support name. The same
// shape as a delivery attempt's words (webhooks/failure-words.ts).
import type { StripeFailure } from "../../stripe/stripe-actions.js";
import { type Html, html } from "../shared/html.js";
import { notice } from "../shared/layout.js";
import type { FailureWords } from "../webhooks/failure-words.js";

const REPLACE_KEY = "Store the current one under Replace the secrets on the Stripe page.";

// First match wins, by Stripe's code (or the stripe package's kind of error) or its message.
// Stripe's messages are matched as well as codes: the reconcile records only the message,
// and a key Stripe refuses comes with no code at all.
const PLAIN: { code?: string[]; message?: RegExp; plain: string; keyRefused?: true }[] = [
  {
    keyRefused: true,
    code: ["StripeAuthenticationError", "api_key_expired"],
    message: /^(Invalid|Expired) API Key provided/,
    plain: `Stripe did not accept the secret key stored here: it was rolled, has expired or was deleted in Stripe. ${REPLACE_KEY}`,
  },
  {
    code: ["StripePermissionError"],
    message: /does not have the required permissions/,
    plain:
      "The restricted key stored here is not allowed to do this: in Stripe's dashboard, give it the permission Stripe names below, or store a key that has it.",
  },
  {
    code: ["StripeRateLimitError", "rate_limit"],
    message: /^Too many requests/,
    plain: "Stripe asked Warden to slow down. Try again in a minute.",
  },
  {
    code: ["StripeConnectionError"],
    message: /connection to Stripe/,
    plain: "Warden could not reach Stripe, so nothing was asked of it. Try again in a few minutes.",
  },
  { code: ["StripeAPIError"], message: /^An unknown error occurred/, plain: "Stripe failed on its side. Try again later." },
  { code: ["charge_already_refunded"], message: /has already been refunded/, plain: "Stripe had refunded this payment already." },
  {
    code: ["charge_disputed"],
    message: /disputed/,
    plain: "The payment is disputed: its money is settled through the dispute, so answer the dispute in Stripe's dashboard.",
  },
  {
    message: /no successful charge|does not have a successful charge|has not been captured/,
    plain: "The payment never went through in Stripe, so there is no money to return.",
  },
  {
    message: /canceled subscription|subscription is (paused|canceled)|already (been )?canceled/,
    plain: "Stripe cannot change this subscription as it is now (ended or paused in Stripe): check it in Stripe's dashboard.",
  },
  {
    message: /cannot currently make live charges/,
    plain: "Your Stripe account cannot take live payments yet: finish activating it in Stripe's dashboard.",
  },
  {
    code: ["resource_missing"],
    message: /^No such /,
    plain: "Stripe has nothing with this id for the key stored here: it was made in another Stripe account or in the other mode.",
  },
];

/** Words for Stripe's answer, and whether it refused the secret key itself (the Stripe page then says so). */
export interface StripeErrorWords extends FailureWords {
  keyRefused: boolean;
}

/** The words for Stripe's answer; an answer no rule knows keeps a general sentence, never a guess. */
export function stripeErrorWords(failure: StripeFailure): StripeErrorWords {
  const known = PLAIN.find((rule) => (failure.code !== null && rule.code?.includes(failure.code) === true) || rule.message?.test(failure.message) === true);
  return {
    plain: known?.plain ?? "Stripe refused the request.",
    raw: failure.code === null ? failure.message : `${failure.code}: ${failure.message}`,
    keyRefused: known?.keyRefused === true,
  };
}

/**
 * A reconcile's recorded failure (stripe-reconcile.service.ts): Stripe's answer after
 * "Stripe: ", or one of Warden's own, which names no Stripe fact.
 */
export function reconcileErrorWords(recorded: string): StripeErrorWords {
  if (recorded.startsWith("Stripe: ")) return stripeErrorWords({ code: null, message: recorded.slice("Stripe: ".length) });
  const own = (plain: string) => ({ plain, raw: recorded, keyRefused: false });
  if (/^its process stopped/.test(recorded)) return own("The server stopped while it ran (a restart or a deploy).");
  if (/lease was taken/.test(recorded)) return own("Another reconcile of this environment took over from this one.");
  return own("It stopped on an error of Warden's own; the server's log has the details.");
}

/**
 * An error notice: what happened (`lead`), the words and what follows from them (`after`),
 * and under them what was recorded, quieter, named by its `source`, for support.
 */
export function failureNotice(words: FailureWords, parts: { lead: Html | string; after?: string; source: string }): Html {
  return notice(
    "error",
    html`<p class="failure-plain">${parts.lead} ${words.plain}${parts.after ? ` ${parts.after}` : ""}</p><p class="raw-detail">${parts.source}: <code>${words.raw}</code></p>`,
  );
}
