import { type Html, html } from "../dashboard/shared/html.js";
import { csrfField, fieldErrorAttributes, fieldErrorNotice, notice } from "../dashboard/shared/layout.js";
import { type CustomerFrame, customerPage } from "./layout.js";

/** What a sign-in page carries from step to step: where to go back to, and an extension's hand-off request. */
export type Carried = Record<string, string>;

const carriedFields = (carried: Carried) => Object.entries(carried).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`);

/** Names the extension a hand-off goes to, so that the person sees who asks before typing anything. */
export interface HandOffView {
  extension: string;
}

interface SignInPage {
  frame: CustomerFrame;
  toolName: string;
  workspaceName: string;
  csrf: string;
  carried: Carried;
  handOff: HandOffView | null;
}

function handOffNote(page: SignInPage): Html {
  if (!page.handOff) return html``;
  return html`<p class="hand-off-note">${page.frame.text.t("signIn.handOff", { tool: page.toolName, extension: page.handOff.extension })}</p>`;
}

export function signInView(page: SignInPage & { email?: string; error?: string; message?: string }): Html {
  const base = page.frame.base;
  const { t, s } = page.frame.text;
  return customerPage(
    s("signIn.title"),
    page.frame,
    html`<section class="card customer-card">
<h1>${t("signIn.heading", { tool: page.toolName })}</h1>
<p class="lede">${t("signIn.lede", { tool: page.toolName, workspace: page.workspaceName })}</p>
${handOffNote(page)}
${page.message ? notice("info", page.message) : ""}
${fieldErrorNotice("email", page.error)}
<form method="post" action="${base}/sign-in" class="stack">
${csrfField(page.csrf)}
${carriedFields(page.carried)}
<label for="email">${t("signIn.email")}</label>
<input id="email" name="email" type="email" autocomplete="email" required${fieldErrorAttributes("email", page.error, { autofocus: true })} value="${page.email ?? ""}" placeholder="${s("signIn.emailPlaceholder")}">
<button class="button primary wide" type="submit">${t("signIn.send")}</button>
</form>
</section>`,
  );
}

export function codeView(page: SignInPage & { email: string; expiresAt: number; error?: string }): Html {
  const base = page.frame.base;
  const { t, s, date } = page.frame.text;
  const again = new URLSearchParams(page.carried).toString();
  return customerPage(
    s("signIn.codeTitle"),
    page.frame,
    html`<section class="card customer-card">
<h1>${t("signIn.codeHeading")}</h1>
<p class="lede">${t("signIn.codeLede", { email: page.email, until: date(page.expiresAt) })}</p>
${handOffNote(page)}
${fieldErrorNotice("code", page.error)}
<form method="post" action="${base}/sign-in/code" class="stack">
${csrfField(page.csrf)}
${carriedFields(page.carried)}
<label for="code">${t("signIn.code")}</label>
<input id="code" name="code" class="code-input" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required${fieldErrorAttributes("code", page.error, { autofocus: true })} placeholder="123456">
<button class="button primary wide" type="submit">${t("signIn.submit")}</button>
</form>
<div class="card-actions">
<form method="post" action="${base}/sign-in">
${csrfField(page.csrf)}
${carriedFields(page.carried)}
<input type="hidden" name="email" value="${page.email}">
<button class="link-button" type="submit">${t("signIn.resend")}</button>
</form>
<a href="${base}/sign-in${again ? `?${again}` : ""}">${t("signIn.otherAddress")}</a>
</div>
</section>`,
  );
}

/** Signed in already, and an extension asks for the session: the person confirms, seeing which extension asks. */
export function continueView(page: SignInPage & { email: string }): Html {
  const base = page.frame.base;
  const { t, s } = page.frame.text;
  const again = new URLSearchParams({ ...page.carried, other: "1" }).toString();
  return customerPage(
    s("signIn.title"),
    page.frame,
    html`<section class="card customer-card">
<h1>${t("signIn.heading", { tool: page.toolName })}</h1>
${handOffNote(page)}
<p class="lede">${t("signIn.continueLede", { email: page.email, workspace: page.workspaceName })}</p>
<form method="post" action="${base}/sign-in/continue" class="stack">
${csrfField(page.csrf)}
${carriedFields(page.carried)}
<button class="button primary wide" type="submit">${t("signIn.continue", { email: page.email })}</button>
</form>
<div class="card-actions"><a href="${base}/sign-in?${again}">${t("signIn.otherAddress")}</a></div>
</section>`,
  );
}
