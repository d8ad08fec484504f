// Names before ids (issue 35): a page leads with what a person calls a thing (a plan's
// name, an endpoint's URL) and keeps the id after it, quieter, for support and the API.
import { type Html, html } from "./html.js";

/** An id under the name it belongs to, in muted monospace. */
export const secondaryId = (id: string): Html => html` <code class="id-secondary">${id}</code>`;
