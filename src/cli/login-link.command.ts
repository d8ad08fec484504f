// `warden admin login-link`: a one-time link into the dashboard for an owner, for the
// first visit and for recovery (no password exists to reset). Kept in its own file so
// that admin.commands.ts only lists it.
import { invalidParameter } from "../errors/errors.js";

import { type Command, optStr, str } from "./command.js";

/** The dashboard's origin for a link in a mail or on the terminal: --base-url, or WARDEN_PUBLIC_URL (by default the local server's). */
export function dashboardBaseUrl(given: string | undefined, config: { publicUrl: string }): string {
  if (given !== undefined && !/^https?:\/\/[^/\s]+\/?$/.test(given)) {
    throw invalidParameter("base-url", "--base-url must be the dashboard's origin, such as https://warden.example.com.");
  }
  return (given ?? config.publicUrl).replace(/\/$/, "");
}

export const loginLinkCommand: Command = {
  summary: "Print a one-time link that signs an owner in to the dashboard (their first visit, or a way back in).",
  usage: "warden admin login-link --email E [--base-url https://warden.example.com]",
  options: { email: { type: "string" }, "base-url": { type: "string" } },
  required: ["email"],
  async run({ values: v, services }) {
    const { createOwnerLoginLink } = await import("../owners/owner-sign-in.service.js");
    const all = await services();
    const base = dashboardBaseUrl(optStr(v, "base-url"), all.config);
    const link = await createOwnerLoginLink(all, { email: str(v, "email") });
    const url = `${base}/dashboard/sign-in/link/${link.token}`;
    return {
      json: { url, email: link.email, expires_at: link.expiresAt },
      text: `${url}\nOpen it to sign in as ${link.email}. It works once, until ${link.expiresAt}.`,
    };
  },
};
