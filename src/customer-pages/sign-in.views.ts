import { type Html, html } from "../dashboard/shared/html.js";
import { csrfField, fieldErrorAttributes, fieldErrorNotice, formatTime, notice } from "../dashboard/shared/layout.js";
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
  return html`<p class="hand-off-note">The <strong>${page.toolName}</strong> extension (id <code class="extension-id">${page.handOff.extension}</code>) asked to sign you in. Once you are signed in, you go back to it: there is nothing to copy.</p>`;
}

export function signInView(page: SignInPage & { email?: string; error?: string; message?: string }): Html {
  const base = page.frame.base;
  return customerPage(
    "Sign in",
    page.frame,
    html`<section class="card customer-card">
<h1>Sign in to ${page.toolName}</h1>
<p class="lede">${page.toolName} is sold by ${page.workspaceName}. Enter your email address: we will send you a 6-digit code. There is no password.</p>
${handOffNote(page)}
${page.message ? notice("info", page.message) : ""}
${fieldErrorNotice("email", page.error)}
<form method="post" action="${base}/sign-in" class="stack">
${csrfField(page.csrf)}
${carriedFields(page.carried)}
<label for="email">Email address</label>
<input id="email" name="email" type="email" autocomplete="email" required${fieldErrorAttributes("email", page.error, { autofocus: true })} value="${page.email ?? ""}" placeholder="you@example.com">
<button class="button primary wide" type="submit">Email me a code</button>
</form>
</section>`,
  );
}

export function codeView(page: SignInPage & { email: string; expiresAt: number; error?: string }): Html {
  const base = page.frame.base;
  const again = new URLSearchParams(page.carried).toString();
  return customerPage(
    "Enter your code",
    page.frame,
    html`<section class="card customer-card">
<h1>Check your inbox</h1>
<p class="lede">We sent a 6-digit code to <strong>${page.email}</strong>. It works once, in this browser, until ${formatTime(page.expiresAt)}.</p>
${handOffNote(page)}
${fieldErrorNotice("code", page.error)}
<form method="post" action="${base}/sign-in/code" class="stack">
${csrfField(page.csrf)}
${carriedFields(page.carried)}
<label for="code">Sign-in code</label>
<input id="code" name="code" class="code-input" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required${fieldErrorAttributes("code", page.error, { autofocus: true })} placeholder="123456">
<button class="button primary wide" type="submit">Sign in</button>
</form>
<div class="card-actions">
<form method="post" action="${base}/sign-in">
${csrfField(page.csrf)}
${carriedFields(page.carried)}
<input type="hidden" name="email" value="${page.email}">
<button class="link-button" type="submit">Send a new code</button>
</form>
<a href="${base}/sign-in${again ? `?${again}` : ""}">Use another address</a>
</div>
</section>`,
  );
}

/** Signed in already, and an extension asks for the session: the person confirms, seeing which extension asks. */
export function continueView(page: SignInPage & { email: string }): Html {
  const base = page.frame.base;
  const again = new URLSearchParams({ ...page.carried, other: "1" }).toString();
  return customerPage(
    "Sign in",
    page.frame,
    html`<section class="card customer-card">
<h1>Sign in to ${page.toolName}</h1>
${handOffNote(page)}
<p class="lede">You are signed in as <strong>${page.email}</strong> on ${page.workspaceName}'s pages.</p>
<form method="post" action="${base}/sign-in/continue" class="stack">
${csrfField(page.csrf)}
${carriedFields(page.carried)}
<button class="button primary wide" type="submit">Continue as ${page.email}</button>
</form>
<div class="card-actions"><a href="${base}/sign-in?${again}">Use another address</a></div>
</section>`,
  );
}
