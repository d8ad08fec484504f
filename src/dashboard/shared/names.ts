// Names before ids (issue 35): a page leads with what a person calls a thing (a plan's
// name, an endpoint's URL) and keeps the id after it, quieter, for support and the API.
import { type Html, html } from "./html.js";

/** An id under the name it belongs to, in muted monospace. */
export const secondaryId = (id: string): Html => html` <code class="id-secondary">${id}</code>`;

/**
 * A dotted name (an event type, an audit action: `purchase.completed`) that a narrow
 * column breaks after a dot, never mid-word ("purchase.complet ed" on a phone): a `<wbr>`
 * after each dot.
 */
export const dottedName = (name: string): Html => html`${name.split(".").map((part, i, parts) => (i < parts.length - 1 ? html`${part}.<wbr>` : part))}`;
