// Customers of a workspace environment, tool by tool: the list (the API's list use case,
// so each page counts its rows read), a lookup by address (the API's retrieve, counted as
// a lookup), and a customer's page with their grants and trials, where an owner grants
// access (days, note) or revokes a grant through the API's grant use cases, and refunds a
// licence or cancels a subscription through the use cases of `warden admin` (a refund, or
// ending a subscription now, after a fresh mailed code). The page shows the tool's features and
// meters as the API's usage read answers them, and adjusts credits by hand through the API's
// adjustment use case (as a grant: the form's token, no fresh code).
import { Readable } from "node:stream";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { refundLicence } from "../../billing/licence.service.js";
import { customerMoney } from "../../billing/money.service.js";
import { cancelSubscription } from "../../billing/subscription.service.js";
import {
  browseCustomers,
  type CustomerBrowseResult,
  type CustomerExport,
  customerHoldings,
  defaultListTool,
  exportCustomers,
  retrieveCustomer,
} from "../../customers/customer.service.js";
import { isEmailShape } from "../../customers/email.js";
import { ApiError } from "../../errors/errors.js";
import { createGrant, listGrants, revokeGrant } from "../../grants/grant.service.js";
import type { ProcessorName } from "../../payments/payment-processor.js";
import { processorOf } from "../../payments/processors.js";
import type { Services } from "../../services.js";
import { stripeFailureOf } from "../../stripe/stripe-actions.js";
import { adjustCredits } from "../../usage/credits.service.js";
import { readToolTerms } from "../../usage/terms.service.js";
import { listCustomerMeters } from "../../usage/usage.service.js";
import { listTools } from "../../workspaces/workspace.service.js";
import type { Tool } from "../../workspaces/workspace.types.js";
import { passCodeGate } from "../shared/fresh-code.js";
import { contextOf, workspacePage } from "../shared/owner-context.js";
import { fieldRefusal, limitReachedOf, sendPage } from "../shared/page.js";
import { formField, PageRefusal } from "../shared/security.js";
import { stripeErrorWords } from "../stripe/stripe-error-words.js";
import type { FailureWords } from "../webhooks/failure-words.js";
import { customersCsv } from "./customers.csv.js";
import {
  type CreditsForm,
  confirmCancelView,
  confirmRefundView,
  confirmRevokeGrantView,
  customerLimitedView,
  customerPath,
  customersPath,
  customersView,
  customerView,
  type EntitledFilter,
  type FormRefusal,
  type MadeAt,
  type ProcessorReach,
} from "./customers.views.js";

const PAGE_SIZE = 50;
const query = (request: FastifyRequest) => request.query as Record<string, string | undefined>;
const isCode = (error: unknown, code: string) => error instanceof ApiError && error.code === code;
/** `at` names the processor that made the change too, or is `warden` when none was asked (the environment's processor then). */
const madeAt = (value: string | undefined, processor: ProcessorName): MadeAt | undefined =>
  value === "stripe" || value === "paddle" ? { processor: value, asked: true } : value === "warden" ? { processor, asked: false } : undefined;
/** A search is part of an address: at most as long as one. */
const SEARCH_MAX = 254;
const CONTROL = /[\u0000-\u001f\u007f]/;

/** A form's days: empty is 0 (until revoked), else a whole number the API would take. */
function daysOf(text: string): number | string {
  const trimmed = text.trim();
  if (trimmed === "") return 0;
  if (!/^\d{1,4}$/.test(trimmed) || Number(trimmed) > 3650) return "Days must be a whole number from 0 to 3650.";
  return Number(trimmed);
}

/** A form's whole number; what is not one reaches the use case as NaN, which it refuses in the catalogue's words. */
const wholeOf = (text: string) => (/^\d{1,15}$/.test(text.trim()) ? Number(text.trim()) : Number.NaN);

export async function customerRoutes(app: FastifyInstance, options: { services: Services }): Promise<void> {
  const { services } = options;
  const base = "/w/:workspace/:env/customers";

  async function customerContext(request: FastifyRequest) {
    const page = await workspacePage(services, request, "customers");
    const { tool: toolId, email } = request.params as { tool: string; email: string };
    const tool = (await listTools(services.db, { workspace: page.workspace.slug })).find((t) => t.id === toolId);
    if (!tool) throw new PageRefusal(404, "Not found", "No such tool in this workspace.");
    return { page, ctx: await contextOf(services, page), tool, email };
  }

  async function renderCustomer(
    request: FastifyRequest,
    status: number,
    extra: { grant?: FormRefusal<{ days: string; note: string }>; credits?: FormRefusal<CreditsForm> } = {},
  ) {
    const { page, ctx, tool, email } = await customerContext(request);
    const customer = await retrieveCustomer(ctx, tool.id, email).catch((error: unknown) => {
      if (isCode(error, "not_found")) return null;
      throw error;
    });
    const { data: grants } = await listGrants(ctx, tool.id, email);
    const holdings = await customerHoldings(ctx, tool.id, email);
    const money = await customerMoney(ctx, tool.id, email);
    // A typed address that is none (the lookup takes any text) has no meters to read: the page still opens, as before.
    const meters = isEmailShape(email) ? await listCustomerMeters(ctx, tool.id, email) : [];
    const { features } = await readToolTerms(services.db, { workspace: page.workspace.slug, tool: tool.id });
    const q = query(request);
    const at = q.at === undefined ? undefined : madeAt(q.at, (await processorOf(services, { workspaceId: page.workspace.id, env: page.env })).name);
    const when: "now" | "period_end" | undefined = q.cancelled === "now" || q.cancelled === "period_end" ? q.cancelled : undefined;
    const cancelled = when && at ? { when, at } : undefined;
    return {
      page,
      status,
      view: customerView(page.frame, {
        tool,
        customer,
        email,
        grants,
        holdings,
        money,
        features,
        meters,
        flash: {
          granted: q.granted === "1",
          revoked: q.revoked === "1",
          refunded: q.refunded === "1" ? at : undefined,
          cancelled,
          credited: q.credited === "1",
        },
        ...extra,
      }),
    };
  }

  /** The list's filters as the address carries them. */
  function listFilter(request: FastifyRequest, tools: Tool[]) {
    const q = query(request);
    const tool = tools.find((t) => t.id === q.tool) ?? tools[0] ?? null;
    const entitled: EntitledFilter = q.entitled === "yes" || q.entitled === "no" ? q.entitled : "all";
    const search = (q.q ?? "").trim();
    return { tool, entitled, search, after: q.after, before: q.before };
  }
  const entitledParam = (entitled: EntitledFilter) => (entitled === "all" ? undefined : entitled === "yes");

  app.get(base, async (request, reply) => {
    const page = await workspacePage(services, request, "customers");
    const tools = await listTools(services.db, { workspace: page.workspace.slug });
    const filter = listFilter(request, tools);
    const { entitled, search, after, before } = filter;
    const ctx = await contextOf(services, page);
    // No tool named: the first with customers, not an empty list of the first tool (docs/decisions.md, Customers list).
    const named = tools.some((t) => t.id === query(request).tool);
    const opening = named
      ? null
      : await defaultListTool(
          ctx,
          tools.map((t) => t.id),
        );
    const tool = named ? filter.tool : (tools.find((t) => t.id === opening) ?? null);
    const empty = { tools, entitled, search, customers: [], next: null, previous: null, total: null };
    if (tool === null) return sendPage(reply, 200, customersView(page.frame, { ...empty, tool: null }));
    if (search.length > SEARCH_MAX || CONTROL.test(search)) {
      return sendPage(reply, 400, customersView(page.frame, { ...empty, tool: tool.id, error: `Search for at most ${SEARCH_MAX} characters of an address.` }));
    }
    let listed: CustomerBrowseResult;
    try {
      listed = await browseCustomers(
        ctx,
        tool.id,
        { limit: PAGE_SIZE, entitled: entitledParam(entitled), ...(after === undefined ? {} : { cursor: after }) },
        { lapsed: true, ...(search === "" ? {} : { search }), ...(before === undefined ? {} : { before }) },
      );
    } catch (error) {
      const limited = limitReachedOf(error);
      if (limited) return sendPage(reply, 429, customersView(page.frame, { ...empty, tool: tool.id, limited }));
      if (!isCode(error, "invalid_parameter")) throw error;
      throw new PageRefusal(400, "Request not understood", "This page of the list is out of date or its address was changed. Open the list again.");
    }
    const link = (cursor: { after: string } | { before: string }) =>
      `${customersPath(page.frame)}?${new URLSearchParams({ tool: tool.id, entitled, ...(search === "" ? {} : { q: search }), ...cursor })}`;
    return sendPage(
      reply,
      200,
      customersView(page.frame, {
        ...empty,
        tool: tool.id,
        customers: listed.data,
        next: listed.next_cursor === null ? null : link({ after: listed.next_cursor }),
        previous: listed.previous_cursor === null ? null : link({ before: listed.previous_cursor }),
        total: listed.total,
      }),
    );
  });

  // The filtered list as CSV, streamed: the use case reads a chunk of rows at a time as
  // the socket takes them, so a tool of a million customers costs no more memory than one.
  app.get(`${base}/export.csv`, async (request, reply) => {
    const page = await workspacePage(services, request, "customers");
    const tools = await listTools(services.db, { workspace: page.workspace.slug });
    const { tool, entitled, search } = listFilter(request, tools);
    // A file is named after its tool: another tool's list in its place would be wrong, not a default.
    if (tool === null || tool.id !== query(request).tool) throw new PageRefusal(404, "Not found", "No such tool in this workspace.");
    if (search.length > SEARCH_MAX || CONTROL.test(search)) throw new PageRefusal(400, "Request not understood", "The search is too long.");
    const ctx = await contextOf(services, page);
    let exported: CustomerExport;
    try {
      exported = await exportCustomers(ctx, tool.id, { entitled: entitledParam(entitled) }, { lapsed: true, ...(search === "" ? {} : { search }) });
    } catch (error) {
      const limited = limitReachedOf(error);
      if (!limited) throw error;
      const empty = { tools, tool: tool.id, entitled, search, customers: [], next: null, previous: null, total: null };
      return sendPage(reply, 429, customersView(page.frame, { ...empty, limited }));
    }
    const file = `customers-${tool.id}-${page.env}.csv`;
    return reply
      .status(200)
      .header("Content-Type", "text/csv; charset=utf-8")
      .header("Content-Disposition", `attachment; filename="${file}"`)
      .send(Readable.from(customersCsv(exported.chunks), { objectMode: false, highWaterMark: 1 }));
  });

  app.get(`${base}/search`, async (request, reply) => {
    const page = await workspacePage(services, request, "customers");
    const q = query(request);
    const email = (q.email ?? "").trim();
    const tools = await listTools(services.db, { workspace: page.workspace.slug });
    const tool = tools.find((t) => t.id === q.tool);
    if (!tool || email === "" || email.length > 254) {
      return sendPage(
        reply,
        400,
        customersView(page.frame, {
          tools,
          tool: tool?.id ?? tools[0]?.id ?? null,
          entitled: "all",
          search: email.slice(0, SEARCH_MAX),
          customers: [],
          next: null,
          previous: null,
          total: null,
          error: "Choose a tool and enter an address of at most 254 characters.",
        }),
      );
    }
    return reply.redirect(customerPath(page.frame, tool.id, email), 303);
  });

  app.get(`${base}/:tool/:email`, async (request, reply) => {
    try {
      const { status, view } = await renderCustomer(request, 200);
      return sendPage(reply, status, view);
    } catch (error) {
      const limited = limitReachedOf(error);
      if (!limited) throw error;
      const { page, tool, email } = await customerContext(request);
      return sendPage(reply, 429, customerLimitedView(page.frame, { tool, email, limited }));
    }
  });

  app.post(`${base}/:tool/:email/grants`, async (request, reply) => {
    const { page, ctx, tool, email } = await customerContext(request);
    const form = { days: formField(request, "days"), note: formField(request, "note") };
    const days = daysOf(form.days);
    const note = form.note.trim();
    const refuse = async (message: string, field?: "days" | "note") => {
      const { view } = await renderCustomer(request, 400, { grant: { error: message, errorParam: field, form } });
      return sendPage(reply, 400, view);
    };
    if (typeof days === "string") return refuse(days, "days");
    if (note.length > 200 || note.includes("\u0000")) return refuse("A note is at most 200 characters.", "note");
    try {
      await createGrant(ctx, tool.id, { email, days, ...(note === "" ? {} : { note }) }, undefined);
    } catch (error) {
      if (!isCode(error, "invalid_parameter")) throw error;
      return refuse((error as ApiError).message);
    }
    return reply.redirect(`${customerPath(page.frame, tool.id, email)}?granted=1`, 303);
  });

  // The API's adjustment, with the owner as actor: audited as credits.adjusted in its
  // transaction. Every refusal of what was typed is the use case's, tied to the field it
  // names; only the add-or-remove choice, which the use case reads as a sign, is the page's.
  app.post(`${base}/:tool/:email/credits`, async (request, reply) => {
    const { page, ctx, tool, email } = await customerContext(request);
    const change = formField(request, "change");
    const form: CreditsForm = {
      meter: formField(request, "meter"),
      change: change === "remove" ? "remove" : "add",
      amount: formField(request, "amount"),
      note: formField(request, "note"),
      expiresInDays: formField(request, "expires_in_days"),
    };
    const refuse = async (refusal: { error: string; errorParam?: string | undefined }) => {
      const { view } = await renderCustomer(request, 400, { credits: { ...refusal, form } });
      return sendPage(reply, 400, view);
    };
    if (change !== "add" && change !== "remove") return refuse({ error: "Choose whether to add or remove credits.", errorParam: "change" });
    const amount = wholeOf(form.amount);
    const days = form.expiresInDays.trim();
    try {
      await adjustCredits(ctx, tool.id, email, {
        meter: form.meter,
        amount: form.change === "remove" ? -amount : amount,
        note: form.note,
        ...(days === "" ? {} : { expires_in_days: wholeOf(days) }),
      });
    } catch (error) {
      const refusal = fieldRefusal(error);
      if (!refusal) throw error;
      return refuse(refusal);
    }
    return reply.redirect(`${customerPath(page.frame, tool.id, email)}?credited=1`, 303);
  });

  // Revoking asks first: the GET says what the customer loses, the POST revokes.
  app.get(`${base}/:tool/:email/grants/:grant/revoke`, async (request, reply) => {
    const { page, ctx, tool, email } = await customerContext(request);
    const { grant: id } = request.params as { grant: string };
    const grant = (await listGrants(ctx, tool.id, email)).data.find((g) => g.id === id && g.kind === "grant" && g.revoked_at === null);
    if (!grant) throw new PageRefusal(404, "Not found", "No such grant of this customer still in force. It may have been revoked already.");
    return sendPage(reply, 200, confirmRevokeGrantView(page.frame, { tool, email, grant }));
  });

  app.post(`${base}/:tool/:email/grants/:grant/revoke`, async (request, reply) => {
    const { page, ctx, tool, email } = await customerContext(request);
    const { grant } = request.params as { grant: string };
    try {
      await revokeGrant(ctx, tool.id, grant);
    } catch (error) {
      if (isCode(error, "not_found")) throw new PageRefusal(404, "Not found", "No such grant for this tool.");
      throw error;
    }
    return reply.redirect(`${customerPath(page.frame, tool.id, email)}?revoked=1`, 303);
  });

  /**
   * Stripe's failure to refund or cancel, in words: a refusal of the request is 400 as
   * before; a key Stripe does not accept, or Stripe out of reach, is 502 (Warden's gateway
   * failed), where it was a bare 500 page. Either way nothing changed in Warden.
   */
  function stripeRefusal(error: unknown): { status: 400 | 502; words: FailureWords } | null {
    const failure = stripeFailureOf(error);
    if (failure === null) return null;
    return { status: isCode(error, "invalid_parameter") ? 400 : 502, words: stripeErrorWords(failure) };
  }

  // Refund and cancel act only on a licence or subscription this page lists: this
  // customer's, for this tool, in this workspace environment; anything else is 404.
  async function holdingsContext(request: FastifyRequest) {
    const found = await customerContext(request);
    const scope = { workspaceId: found.page.workspace.id, env: found.page.env };
    const processor = await processorOf(services, scope);
    const reach: ProcessorReach = { processor: processor.name, acts: await processor.canAct(services, scope) };
    return { ...found, reach, holdings: await customerHoldings(found.ctx, found.tool.id, found.email) };
  }

  app.post(`${base}/:tool/:email/licences/:licence/refund`, async (request, reply) => {
    const { page, tool, email, holdings, reach } = await holdingsContext(request);
    const { licence: id } = request.params as { licence: string };
    const licence = holdings.licences.find((l) => l.id === id);
    if (!licence) throw new PageRefusal(404, "Not found", "No such licence for this customer.");
    if (licence.seat || !licence.paid || licence.status === "revoked") {
      throw new PageRefusal(400, "Nothing to refund", "This licence is revoked, is a seat of a team purchase, or has no recorded payment.");
    }
    const refuse = (status: number, error: string | FailureWords) =>
      sendPage(reply, status, confirmRefundView(page.frame, { tool, email, licence, reach, error }));
    const passed = await passCodeGate(services, request, reply, page.owner.session, {
      confirms: { action: `refund licence ${licence.id} of ${email}`, target: [page.workspace.id, page.env, licence.id] },
      page: (error) => confirmRefundView(page.frame, { tool, email, licence, reach, error }),
    });
    if (!passed) return reply;
    let refunded: Awaited<ReturnType<typeof refundLicence>>;
    try {
      refunded = await refundLicence(services, { id: licence.id, actor: page.owner.session.actor });
    } catch (error) {
      const refusal = stripeRefusal(error);
      if (refusal) return refuse(refusal.status, refusal.words);
      if (!isCode(error, "invalid_parameter")) throw error;
      return refuse(400, (error as ApiError).message);
    }
    // The result says what the use case did, not what the page expected: the processor asked or not.
    return reply.redirect(`${customerPath(page.frame, tool.id, email)}?refunded=1&at=${refunded.at_processor ?? "warden"}`, 303);
  });

  async function subscriptionOf(request: FastifyRequest) {
    const found = await holdingsContext(request);
    const { subscription: id } = request.params as { subscription: string };
    const subscription = found.holdings.subscriptions.find((s) => s.id === id && s.endedAt === null);
    if (!subscription) throw new PageRefusal(404, "Not found", "No such subscription of this customer still running.");
    return { ...found, subscription };
  }

  app.get(`${base}/:tool/:email/subscriptions/:subscription/cancel`, async (request, reply) => {
    const { page, tool, email, subscription, reach } = await subscriptionOf(request);
    return sendPage(reply, 200, confirmCancelView(page.frame, { tool, email, subscription, reach }));
  });

  app.post(`${base}/:tool/:email/subscriptions/:subscription/cancel`, async (request, reply) => {
    const { page, tool, email, subscription, reach } = await subscriptionOf(request);
    const when = formField(request, "when");
    if (when !== "now" && when !== "period_end") throw new PageRefusal(400, "Request not understood", "Choose when the subscription ends.");
    const view = (status: number, extra: { codeSent?: boolean; error?: string | FailureWords }) =>
      sendPage(reply, status, confirmCancelView(page.frame, { tool, email, subscription, reach, ...extra }));
    if (when === "now") {
      const passed = await passCodeGate(services, request, reply, page.owner.session, {
        confirms: { action: `end subscription ${subscription.id} of ${email} now`, target: [page.workspace.id, page.env, subscription.id] },
        page: (error) => confirmCancelView(page.frame, { tool, email, subscription, reach, codeSent: true, error }),
      });
      if (!passed) return reply;
    }
    let cancelled: Awaited<ReturnType<typeof cancelSubscription>>;
    try {
      cancelled = await cancelSubscription(services, {
        id: subscription.id,
        now: when === "now",
        workspace: page.workspace.slug,
        env: page.env,
        actor: page.owner.session.actor,
      });
    } catch (error) {
      const refusal = stripeRefusal(error);
      if (refusal) return view(refusal.status, { error: refusal.words });
      if (!isCode(error, "invalid_parameter")) throw error;
      return view(400, { error: (error as ApiError).message });
    }
    return reply.redirect(`${customerPath(page.frame, tool.id, email)}?cancelled=${when}&at=${cancelled.at_processor ?? "warden"}`, 303);
  });
}
