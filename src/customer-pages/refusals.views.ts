// A use case's refusal as a hosted page says it: in the buyer's language, from the
// catalogue's `refusal.<reason>` with the facts it names (a date in the page's format, the
// vendor's names as the page shows them); a refusal with no reason of its own keeps the
// API's English message, so nothing the person can act on is lost for want of words.
import { ApiError } from "../errors/errors.js";
import type { PageText } from "./layout.js";

/** The words of a refusal the person can act on (invalid input, a plan limit), or null for a failure that is an error page. */
export function refusalWords(text: PageText, error: unknown, names: { workspace: string; tool: string }): string | null {
  if (!(error instanceof ApiError) || (error.code !== "invalid_parameter" && error.code !== "plan_limit")) return null;
  if (error.reason === undefined) return error.message;
  const { at, ...facts } = error.facts;
  return text.s(`refusal.${error.reason}`, {
    ...facts,
    ...names,
    date: typeof at === "number" ? text.messages.dateTime(at) : "",
  });
}
