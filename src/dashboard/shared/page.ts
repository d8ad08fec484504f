import type { FastifyReply } from "fastify";
import { ApiError } from "../../errors/errors.js";
import type { Html } from "./html.js";

/** Sends a rendered page; every page is UTF-8 HTML, said in the header and in the page. */
export function sendPage(reply: FastifyReply, status: number, page: Html) {
  return reply.status(status).header("Content-Type", "text/html; charset=utf-8").send(page.markup);
}

/** The message of a use case's refusal of what was typed (shown on the form again), or null for any other failure (an error page). */
export const fieldError = (error: unknown) => (error instanceof ApiError && error.code === "invalid_parameter" ? error.message : null);

/** A use case's refusal of what was typed, with the parameter it names (to tie the message to its field), or null for any other failure. */
export function fieldRefusal(error: unknown): { error: string; errorParam: string | undefined } | null {
  return error instanceof ApiError && error.code === "invalid_parameter" ? { error: error.message, errorParam: error.param } : null;
}
