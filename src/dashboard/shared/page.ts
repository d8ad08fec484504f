import type { FastifyReply } from "fastify";
import type { Html } from "./html.js";

/** Sends a rendered page; every page is UTF-8 HTML, said in the header and in the page. */
export function sendPage(reply: FastifyReply, status: number, page: Html) {
  return reply.status(status).header("Content-Type", "text/html; charset=utf-8").send(page.markup);
}
