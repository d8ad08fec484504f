// The hosted pages' real-browser tests' one set-up: a workspace whose test environment is
// connected to a local stand-in of Stripe's API (or of Paddle's), Warden listening on a
// port its public URL names (the pages' links and the processors' return addresses lead
// back to it), and the steps every such test takes in the browser: Stripe Checkout, or the
// vendor's Paddle payment link page, answered here; the mailed-code sign-in.
import type { FastifyInstance } from "fastify";
import type { Browser, BrowserContext, Page } from "playwright-core";
import type { ManualClock } from "../clock.js";
import type { Dialect } from "../db/database.js";
import type { Services } from "../services.js";
import { listening, withChromium } from "./browser.js";
import { pagesOf } from "./customer-pages.js";
import { dashboardServices, readCode } from "./dashboard.js";
import { apiOver, seedCatalogue, type TestApi, type Workspace } from "./harness.js";
import { connectTestPaddle, linkTestPaddlePrices, paddleEvent, sendPaddleEvent, startPaddleApi } from "./paddle.js";
import { freePort } from "./serve.js";
import { connectTestStripe, deliver, stripeEvent } from "./stripe.js";
import { type StripeApiStandIn, startStripeApi } from "./stripe-api.js";

const STRIPE_SECRET_KEY = "sk_test_hostedPagesStandIn0123";

export interface HostedPages {
  services: Services;
  clock: ManualClock;
  /** Where the outbox is: `readCode(dataDir, email)`. */
  dataDir: string;
  stripeApi: StripeApiStandIn;
  ws: Workspace;
  app: FastifyInstance;
  /** Calls to the listening app, each answer checked against the OpenAPI document. */
  api: TestApi;
  /** `http://127.0.0.1:<port>` */
  origin: string;
  /** The workspace's test pages of its tool: `<origin>/c/{slug}/test/{tool}`. */
  pages: string;
  /** A Stripe-signed event of `type` about `object`, delivered to the workspace's webhook now; answers its outcome ("applied"). */
  send(type: string, object: Record<string, unknown>): Promise<string>;
  /** Closes Warden. */
  close(): Promise<void>;
}

export interface HostedPagesInBrowser extends HostedPages {
  browser: Browser;
  /** Closes the browser, then Warden. */
  close(): Promise<void>;
}

export interface HostedPagesOptions {
  /** The catalogue the workspace gets: `seedCatalogue`'s by default. */
  seed?: (services: Services) => Promise<Workspace>;
  /** Where the test clock stands before anything is written (real time for an extension, whose tokens the browser's clock reads). */
  now?: number;
}

/** Stripe's stand-in, services whose public URL is the port Warden then listens on, a seeded workspace connected to Stripe. */
export async function hostedPages(dialect: Dialect, options: HostedPagesOptions = {}): Promise<HostedPages> {
  const stripeApi = await startStripeApi();
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const { services, clock, dataDir } = await dashboardServices(dialect, { WARDEN_STRIPE_API_URL: stripeApi.url, WARDEN_PUBLIC_URL: origin });
  if (options.now !== undefined) clock.set(options.now);
  const ws = await (options.seed ?? seedCatalogue)(services);
  const secret = await connectTestStripe(services, ws, "test", STRIPE_SECRET_KEY);
  const { app, close } = await listening(services, { port });
  const api = apiOver(app);
  return {
    services,
    clock,
    dataDir,
    stripeApi,
    ws,
    app,
    api,
    origin,
    pages: `${origin}${pagesOf(ws)}`,
    send: (type, object) => deliver(api, ws, secret, stripeEvent(type, object, { now: clock.now() }), clock.now()),
    close,
  };
}

const PADDLE_API_KEY = "pdl_sdbx_apikey_hostedPagesStandIn0123";

export type PaddleApiStandIn = Awaited<ReturnType<typeof startPaddleApi>>;

export interface PaddleHostedPagesInBrowser extends Omit<HostedPages, "stripeApi" | "send"> {
  paddleApi: PaddleApiStandIn;
  browser: Browser;
  /** A Paddle-signed notification of `type` about `data`, delivered to the workspace's webhook now; answers its outcome ("applied"). */
  send(type: string, data: Record<string, unknown>): Promise<string>;
}

/** `hostedPagesInBrowser` with Paddle as the test environment's processor (its API key connected, the catalogue's plans linked to its prices). */
export async function paddleHostedPagesInBrowser(dialect: Dialect): Promise<PaddleHostedPagesInBrowser> {
  const paddleApi = await startPaddleApi(PADDLE_API_KEY);
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const { services, clock, dataDir } = await dashboardServices(dialect, { WARDEN_PADDLE_API_URL: paddleApi.url, WARDEN_PUBLIC_URL: origin });
  const ws = await seedCatalogue(services);
  const secret = await connectTestPaddle(services, ws, "test", PADDLE_API_KEY);
  await linkTestPaddlePrices(services, ws);
  const { app, close } = await listening(services, { port });
  const api = apiOver(app);
  const send = async (type: string, data: Record<string, unknown>) => {
    const answer = await sendPaddleEvent(api, ws, secret, paddleEvent(type, data, { now: clock.now() }), { now: clock.now() });
    return String((answer.json() as { outcome?: unknown }).outcome ?? answer.body);
  };
  return withChromium({ services, clock, dataDir, paddleApi, ws, app, api, origin, pages: `${origin}${pagesOf(ws)}`, send, close });
}

/**
 * The vendor's default payment link page with Paddle's checkout on it, answered here: it
 * shows the transaction (`?_ptxn=`) and a Pay button. Paying completes the transaction at
 * the stand-in, keeps the notifications Paddle would send in `held` (for the test to
 * deliver when it chooses), and sends the buyer on as the vendor's page does on
 * checkout.completed: to the transaction's `warden_success_url`, its id in place of
 * {CHECKOUT_SESSION_ID}.
 */
export async function answerPaddleCheckout(
  context: BrowserContext,
  paddleApi: PaddleApiStandIn,
  clock: ManualClock,
  held: { type: string; data: Record<string, unknown> }[],
): Promise<void> {
  await context.route("https://pay.example.com/**", (route) => {
    const request = route.request();
    if (request.method() === "GET") {
      const txn = new URL(request.url()).searchParams.get("_ptxn") ?? "";
      const body = `<!doctype html><html lang="en"><title>Paddle Checkout</title><h1>Paddle Checkout</h1>
<form method="post" action="/checkout/pay"><input type="hidden" name="_ptxn" value="${txn.replace(/\W/g, "")}"><button>Pay</button></form>`;
      return route.fulfill({ status: 200, contentType: "text/html", body });
    }
    const txn = new URLSearchParams(request.postData() ?? "").get("_ptxn") ?? "";
    held.push(...paddleApi.payCheckout(txn, clock.now()));
    const customData = paddleApi.transactions.get(txn)?.custom_data as Record<string, string>;
    const back = String(customData.warden_success_url).replace("{CHECKOUT_SESSION_ID}", txn);
    return route.fulfill({ status: 303, headers: { location: back } });
  });
}

/** `hostedPages`, and chromium launched. */
export async function hostedPagesInBrowser(dialect: Dialect, options: HostedPagesOptions = {}): Promise<HostedPagesInBrowser> {
  return withChromium(await hostedPages(dialect, options));
}

/** Stripe Checkout is not reached for real: the context's requests to it are answered here, their addresses kept in `seen` if given. */
export async function answerStripeCheckout(context: BrowserContext, seen: string[] = []): Promise<void> {
  await context.route("https://checkout.stripe.com/**", (route) => {
    seen.push(route.request().url());
    return route.fulfill({ status: 200, contentType: "text/html", body: "<!doctype html><title>Stripe Checkout</title><h1>Stripe Checkout</h1>" });
  });
}

/** On the hosted sign-in page the browser shows: `email`, then the code mailed to the outbox of `dataDir`; where it lands is the caller's to check. */
export async function signInOnHostedPage(page: Page, dataDir: string, email: string): Promise<void> {
  await page.fill("#email", email);
  await page.click("form.stack button[type=submit]");
  await page.waitForURL(/\/sign-in\/code/);
  await page.fill("#code", await readCode(dataDir, email));
  await page.click("form.stack button[type=submit]");
}
