import Stripe from "stripe";

/**
 * A `stripe` client for one workspace environment's secret key. `apiUrl` points it at
 * another address than Stripe's (WARDEN_STRIPE_API_URL: a stand-in in tests, stripe-mock
 * in development); the package takes host, port and protocol for that.
 */
export function stripeClient(secretKey: string, apiUrl: string | null): Stripe {
  const config: ConstructorParameters<typeof Stripe>[1] = { maxNetworkRetries: 1, timeout: 10_000, telemetry: false };
  if (apiUrl !== null) {
    const url = new URL(apiUrl);
    const protocol = url.protocol === "http:" ? "http" : "https";
    config.host = url.hostname;
    config.port = url.port === "" ? (protocol === "http" ? 80 : 443) : Number(url.port);
    config.protocol = protocol;
  }
  return new Stripe(secretKey, config);
}
