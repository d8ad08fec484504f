import type { KeySummary } from "../../auth/key.service.js";
import type { Env } from "../../db/schema.js";
import { type Html, html } from "../shared/html.js";
import {
  appPage,
  copyField,
  csrfField,
  currentSectionPath,
  emptyState,
  envBadge,
  type Frame,
  fieldErrorAttributes,
  fieldErrorNotice,
  notice,
  pageHeading,
  scrollBox,
  time,
} from "../shared/layout.js";

export const keysPath = (frame: Frame) => currentSectionPath(frame, "keys");

/** `wk_test_…abcd`: enough to tell keys apart, never enough to use one. */
export const maskedKey = (env: Env, lastFour: string | null) => `wk_${env}_…${lastFour ?? "····"}`;

function createForm(frame: Frame, env: Env, error?: string, name?: string): Html {
  return html`<form method="post" action="${keysPath(frame)}" class="inline-form">
${csrfField(frame.csrf)}
<div class="field">
<label for="name">New key's name <span class="muted">(optional)</span></label>
<input id="name" name="name" maxlength="100"${fieldErrorAttributes("name", error)} placeholder="e.g. Production server" value="${name ?? ""}">
</div>
<button class="button primary" type="submit">Create ${env} key</button>
</form>
${env === "live" ? html`<p class="hint">A live key acts on real customers: we will email you a code to confirm it is you.</p>` : ""}
${fieldErrorNotice("name", error)}`;
}

function keyRow(frame: Frame, key: KeySummary): Html {
  const revoked = key.revokedAt !== null;
  return html`<tr${revoked ? html` class="is-revoked"` : ""}>
<td>${key.name === null ? html`<span class="muted">Unnamed key</span>` : key.name}</td>
<td><code class="key">${maskedKey(key.env, key.lastFour)}</code></td>
<td>${time(key.createdAt)}</td>
<td>${key.lastUsedAt === null ? html`<span class="muted">Never</span>` : time(key.lastUsedAt)}</td>
<td class="actions">${
    revoked
      ? html`<span class="badge badge-revoked">Revoked</span>`
      : html`<a class="button small danger-outline" href="${keysPath(frame)}/${key.id}/revoke">Revoke…</a>`
  }</td>
</tr>`;
}

/** The revoked key by its name and masked value; the id only when it is not in the list. */
function revokedKeyName(keys: KeySummary[], id: string): Html {
  const key = keys.find((k) => k.id === id);
  if (!key) return html`<code>${id}</code>`;
  const masked = html`<code class="key">${maskedKey(key.env, key.lastFour)}</code>`;
  return key.name === null ? masked : html`<strong>${key.name}</strong> ${masked}`;
}

export function keysView(frame: Frame, keys: KeySummary[], options: { revoked?: string; error?: string; name?: string } = {}): Html {
  const env = frame.current?.env ?? "test";
  const active = keys.filter((k) => k.revokedAt === null);
  const table =
    keys.length === 0
      ? emptyState(
          `No ${env} keys yet`,
          html`Create one below and put it in your server's configuration. Your server sends it as <code>Authorization: Bearer wk_${env}_…</code> to ask whether a customer holds a tool.`,
        )
      : html`<div class="table-wrap"${scrollBox("API keys")}><table>
<thead><tr><th>Name</th><th>Key</th><th>Created</th><th>Last used</th><th><span class="sr-only">Actions</span></th></tr></thead>
<tbody>${keys.map((key) => keyRow(frame, key))}</tbody>
</table></div>`;
  return appPage(
    "API keys",
    frame,
    html`${pageHeading("API keys", html`Keys let your server call Warden's API for this workspace's ${env === "test" ? "test" : "live"} data. ${envBadge(env)}`)}
${options.revoked ? notice("success", html`Key ${revokedKeyName(keys, options.revoked)} is revoked. The API refuses it from its next request.`) : ""}
<section class="panel">
<div class="panel-head"><h2>${active.length === 1 ? "1 active key" : `${active.length} active keys`}</h2></div>
${table}
</section>
<section class="panel">
<div class="panel-head"><h2>Create a key</h2></div>
<p class="panel-text">The key is shown once, right after you create it. Warden keeps only a hash of it.</p>
${createForm(frame, env, options.error, options.name)}
</section>`,
  );
}

export function keyCreatedView(frame: Frame, created: { id: string; key: string; name: string | null }): Html {
  return appPage(
    "Key created",
    frame,
    html`${pageHeading("Your new API key")}
<section class="panel reveal">
${notice("info", html`<strong>Copy it now.</strong> This is the only time Warden shows this key. If you lose it, revoke it and create another.`)}
${copyField("new-key", created.name ?? "Unnamed key", created.key)}
<p class="hint">Use it as <code>Authorization: Bearer ${created.key.slice(0, 8)}…</code> from your server only: never ship it inside an extension or a web page.</p>
<p><a class="button primary" href="${keysPath(frame)}">I have stored it · back to keys</a></p>
</section>`,
    { copyButtons: true },
  );
}

export function confirmLiveKeyView(frame: Frame, input: { name: string; error?: string }): Html {
  return appPage(
    "Confirm live key",
    frame,
    html`${pageHeading("Confirm it is you", html`A live key acts on real customers, so we emailed a fresh 6-digit code to <strong>${frame.email}</strong>.`)}
<section class="panel narrow">
${fieldErrorNotice("code", input.error)}
<form method="post" action="${keysPath(frame)}" class="stack">
${csrfField(frame.csrf)}
<input type="hidden" name="name" value="${input.name}">
<input type="hidden" name="confirm" value="1">
<label for="code">Confirmation code</label>
<input id="code" name="code" class="code-input" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required${fieldErrorAttributes("code", input.error, { autofocus: true })} placeholder="123456">
<div class="row"><button class="button primary" type="submit">Create live key</button><a class="button" href="${keysPath(frame)}">Cancel</a></div>
</form>
</section>`,
  );
}

export function revokeKeyView(frame: Frame, key: KeySummary): Html {
  return appPage(
    "Revoke key",
    frame,
    html`${pageHeading("Revoke this key?")}
<section class="panel narrow">
<dl class="facts">
<dt>Name</dt><dd>${key.name ?? html`<span class="muted">Unnamed key</span>`}</dd>
<dt>Key</dt><dd><code class="key">${maskedKey(key.env, key.lastFour)}</code></dd>
<dt>Last used</dt><dd>${key.lastUsedAt === null ? "Never" : time(key.lastUsedAt)}</dd>
</dl>
${notice("error", "Anything still using this key starts getting 401 answers on its very next request. This cannot be undone.")}
<form method="post" action="${keysPath(frame)}/${key.id}/revoke" class="row">
${csrfField(frame.csrf)}
<button class="button danger" type="submit">Revoke key</button>
<a class="button" href="${keysPath(frame)}">Keep it</a>
</form>
</section>`,
  );
}
