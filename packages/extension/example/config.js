// Where this extension's Warden is, and what it sells. Point url at your Warden (the
// workspace's address, or any address with workspace named here).
export const config = {
  url: "http://127.0.0.1:8080",
  workspace: "acme",
  tool: "tabmaster",
  // "test" while developing (seen with test keys), "live" in the published extension.
  env: "test",
  // Where Stripe sends the buyer after paying.
  successUrl: "https://example.com/thanks",
  // The meter the popup's "Use one" button spends (one of the tool's meters); null: no button.
  meter: "summaries",
};
