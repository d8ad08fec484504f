// The shell of every hosted page: the vendor's workspace name (not Warden's) in a top
// bar, Plans and Manage, the person's address and Sign out when signed in; the content in
// one column that reads at 390 px. The head, skip link and form pieces are the dashboard's.
import { type Html, html } from "../dashboard/shared/html.js";
import { csrfField, head, skipLink } from "../dashboard/shared/layout.js";
import type { Env } from "../db/schema.js";

export type CustomerSection = "plans" | "manage" | "trial" | "sign-in";

/** Everything the shell needs; `base` is the page's `/c/{workspace}/{env}/{tool}`, null on a page of no known tool. */
export interface CustomerFrame {
  workspaceName: string | null;
  env: Env | null;
  base: string | null;
  /** The signed-in person: their address (null for a key-activated device's session) and the session's form token. */
  customer: { email: string | null; csrf: string } | null;
  section?: CustomerSection;
  /** The workspace's branding (branding.service.ts): its stylesheet (the accent) and logo, by versioned address. */
  brand?: { stylesheet: string | null; logo: string | null };
}

function nav(frame: CustomerFrame): Html {
  if (frame.base === null) return html``;
  const link = (section: CustomerSection, label: string) =>
    html`<a class="customer-nav-link" href="${frame.base}/${section}"${frame.section === section ? html` aria-current="page"` : ""}>${label}</a>`;
  return html`<nav class="customer-nav" aria-label="Pages">${link("plans", "Plans")}${link("manage", "Manage")}</nav>`;
}

function account(frame: CustomerFrame): Html {
  if (frame.base === null) return html``;
  if (frame.customer === null) {
    return frame.section === "sign-in" ? html`` : html`<div class="top-end"><a href="${frame.base}/sign-in">Sign in</a></div>`;
  }
  return html`<div class="top-end">
${frame.customer.email ? html`<span class="who">${frame.customer.email}</span>` : html`<span class="who">Signed in with a licence key</span>`}
<form method="post" action="${frame.base}/sign-out">${csrfField(frame.customer.csrf)}<button class="link-button" type="submit">Sign out</button></form>
</div>`;
}

/** A hosted page: the shell around one column of content; `copyButtons` loads the script behind copyField's button. */
export function customerPage(title: string, frame: CustomerFrame, content: Html, options: { copyButtons?: boolean } = {}): Html {
  const site = frame.workspaceName ?? "Warden";
  const logo = frame.brand?.logo;
  // The vendor's logo is the tab's icon; without one, none (Warden's mark is the dashboard's, and these pages are the vendor's).
  return html`${head(title, { site, brandStylesheet: frame.brand?.stylesheet ?? null, icon: logo ?? null, ...options })}
<body class="customer">
${skipLink}
${frame.env === "test" ? html`<div class="test-banner" role="status"><strong>Test mode</strong> · Nothing here is charged.</div>` : ""}
<header class="top customer-top">
<span class="brand customer-brand">${logo ? html`<img class="customer-logo" src="${logo}" alt="" height="32">` : html`<span class="brand-mark" aria-hidden="true">${site.slice(0, 1).toUpperCase()}</span>`} ${site}</span>
${nav(frame)}
${account(frame)}
</header>
<main class="customer-main" id="content">
${content}
</main>
<footer class="customer-foot"><p>Pages served for ${site} by Warden</p></footer>
</body>
</html>`;
}
