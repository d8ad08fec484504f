// The fresh-code gate in front of every action that creates or changes a credential, lets
// someone in or out, or destroys something live (the list and the threat are in
// ../README.md, "Dangerous actions ask for a fresh code"). The first post mails a code
// bound to this session, this action and this target; the confirmation page carries the
// form's fields back with the code; the second post checks the code against the fields
// it carries, so a code mailed for one action or target never confirms another.
import type { FastifyReply, FastifyRequest } from "fastify";
import { type ConfirmedAction, type OwnerSessionView, requestConfirmationCode, verifyConfirmationCode } from "../../owners/owner-sign-in.service.js";
import type { Services } from "../../services.js";
import { type Html, html } from "./html.js";
import { appPage, csrfField, type Frame, fieldErrorAttributes, fieldErrorNotice, pageHeading } from "./layout.js";
import { fieldError, sendPage } from "./page.js";
import { formField } from "./security.js";

export interface CodeGate {
  confirms: ConfirmedAction;
  /** The confirmation page: when the code is mailed (no error), and again with the refusal of a wrong one. */
  page: (error?: string) => Html;
}

/**
 * True when the request carries this session's right code for `gate.confirms`; otherwise
 * the confirmation page has been sent (a code mailed, or the refusal of the one typed).
 */
export async function passCodeGate(
  services: Services,
  request: FastifyRequest,
  reply: FastifyReply,
  session: OwnerSessionView,
  gate: CodeGate,
): Promise<boolean> {
  if (formField(request, "confirm") !== "1") {
    await requestConfirmationCode(services, session, { confirms: gate.confirms });
    await sendPage(reply, 200, gate.page());
    return false;
  }
  try {
    await verifyConfirmationCode(services, session, formField(request, "code"), gate.confirms);
    return true;
  } catch (error) {
    const message = fieldError(error);
    if (message === null) throw error;
    await sendPage(reply, 400, gate.page(message));
    return false;
  }
}

/** The code field of every confirmation page. */
const codeField = (error: string | undefined) => html`<label for="code">Confirmation code</label>
<input id="code" name="code" class="code-input" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required${fieldErrorAttributes("code", error, { autofocus: true })} placeholder="123456">`;

/**
 * A confirmation page for an action with no page of its own: what it does, the code
 * field, and the form's fields carried back as they were posted (this answer is no-store).
 */
export function confirmCodeView(
  frame: Frame,
  input: {
    title: string;
    what: Html | string;
    postTo: string;
    fields: Record<string, string>;
    submit: string;
    cancel: string;
    danger?: boolean;
    error?: string;
  },
): Html {
  return appPage(
    input.title,
    frame,
    html`${pageHeading("Confirm it is you", html`${input.what} We emailed a fresh 6-digit code to <strong>${frame.email}</strong>; it confirms this and nothing else.`)}
<section class="panel narrow">
${fieldErrorNotice("code", input.error)}
<form method="post" action="${input.postTo}" class="stack" autocomplete="off">
${csrfField(frame.csrf)}
${Object.entries(input.fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
<input type="hidden" name="confirm" value="1">
${codeField(input.error)}
<div class="row"><button class="button ${input.danger ? "danger" : "primary"}" type="submit">${input.submit}</button><a class="button" href="${input.cancel}">Cancel</a></div>
</form>
</section>`,
  );
}
