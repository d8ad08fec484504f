import { type Html, html } from "../shared/html.js";
import { cardPage, csrfField, DASHBOARD, fieldErrorAttributes, fieldErrorNotice, formatTime, notice } from "../shared/layout.js";

export function signInView(input: { csrf: string; email?: string; error?: string; message?: string }): Html {
  return cardPage(
    "Sign in",
    html`<h1>Sign in to your dashboard</h1>
<p class="lede">Enter the address you own your workspaces with. We will email you a 6-digit code: there is no password to remember or to leak.</p>
${input.message ? notice("info", input.message) : ""}
${fieldErrorNotice("email", input.error)}
<form method="post" action="${DASHBOARD}/sign-in" class="stack">
${csrfField(input.csrf)}
<label for="email">Email address</label>
<input id="email" name="email" type="email" autocomplete="email" required${fieldErrorAttributes("email", input.error, { autofocus: true })} value="${input.email ?? ""}" placeholder="you@example.com">
<button class="button primary wide" type="submit">Email me a code</button>
</form>
<p class="hint">Locked out? Your operator can print a one-time sign-in link with <code>warden admin login-link --email you@example.com</code>.</p>`,
  );
}

export function codeView(input: { csrf: string; email: string; expiresAt: number; error?: string }): Html {
  return cardPage(
    "Enter your code",
    html`<h1>Check your inbox</h1>
<p class="lede">If <strong>${input.email}</strong> owns a workspace, a 6-digit code is on its way. It works once, in this browser only, until ${formatTime(input.expiresAt)}.</p>
${fieldErrorNotice("code", input.error)}
<form method="post" action="${DASHBOARD}/sign-in/code" class="stack">
${csrfField(input.csrf)}
<label for="code">Sign-in code</label>
<input id="code" name="code" class="code-input" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required${fieldErrorAttributes("code", input.error, { autofocus: true })} placeholder="123456">
<button class="button primary wide" type="submit">Sign in</button>
</form>
<div class="card-actions">
<form method="post" action="${DASHBOARD}/sign-in">
${csrfField(input.csrf)}
<input type="hidden" name="email" value="${input.email}">
<button class="link-button" type="submit">Send a new code</button>
</form>
<a href="${DASHBOARD}/sign-in">Use another address</a>
</div>`,
  );
}

export function linkView(input: { csrf: string; token: string; email: string }): Html {
  return cardPage(
    "Sign in with a link",
    html`<h1>Sign in as ${input.email}</h1>
<p class="lede">This one-time link was made by your operator. It signs you in once; after that it is spent.</p>
<form method="post" action="${DASHBOARD}/sign-in/link/${input.token}" class="stack">
${csrfField(input.csrf)}
<button class="button primary wide" type="submit">Continue to the dashboard</button>
</form>`,
  );
}

export function spentLinkView(): Html {
  return cardPage(
    "Link expired",
    html`<h1>This link no longer works</h1>
<p class="lede">Sign-in links work once, for 15 minutes. Ask your operator for a new one, or sign in with a code sent to your address.</p>
<p><a class="button primary" href="${DASHBOARD}/sign-in">Sign in with a code</a></p>`,
  );
}
