import { type CliEnv, CliError, type Values } from "./command.js";

const DEFAULT_BASE_URL = "http://127.0.0.1:8080";

/** Calls a running Warden with an API key, for the commands that act through the service. */
export class ApiClient {
  constructor(
    private readonly baseUrl: string,
    private readonly apiKey: string,
  ) {}

  /**
   * From --api-key / WARDEN_API_KEY and --base-url / WARDEN_BASE_URL. The base URL is
   * the service's address (http://127.0.0.1:8080) or, as the specification writes
   * {base_url}, the API's (http://127.0.0.1:8080/api/v1): either works.
   */
  static from(values: Values, env: CliEnv): ApiClient {
    const apiKey = (values["api-key"] as string | undefined) ?? env.WARDEN_API_KEY;
    if (!apiKey) throw new CliError("invalid_request_error", "An API key is needed: pass --api-key wk_… or set WARDEN_API_KEY.", "api-key");
    const baseUrl = ((values["base-url"] as string | undefined) ?? env.WARDEN_BASE_URL ?? DEFAULT_BASE_URL).replace(/\/+$/, "").replace(/\/api\/v1$/, "");
    if (!/^https?:\/\//.test(baseUrl)) throw new CliError("invalid_request_error", `--base-url must be an http(s) URL, got "${baseUrl}".`, "base-url");
    return new ApiClient(baseUrl, apiKey);
  }

  async request<T>(method: "GET" | "POST" | "DELETE", path: string, body?: unknown): Promise<T> {
    let response: Response;
    try {
      response = await fetch(`${this.baseUrl}/api/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${this.apiKey}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
    } catch (error) {
      const reason = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
      throw new CliError("api_error", `Could not reach Warden at ${this.baseUrl}: ${reason}. Is it running (warden serve)? Set --base-url or WARDEN_BASE_URL.`);
    }
    const text = await response.text();
    let json: unknown;
    try {
      json = text === "" ? null : JSON.parse(text);
    } catch {
      throw new CliError("api_error", `Warden answered ${response.status} with a body that is not JSON.`);
    }
    if (!response.ok) {
      const error = (json as { error?: { type?: string; message?: string; param?: string } } | null)?.error;
      throw new CliError(error?.type ?? "api_error", error?.message ?? `Warden answered ${response.status}.`, error?.param);
    }
    return json as T;
  }
}

export const clientOptions = { "api-key": { type: "string" }, "base-url": { type: "string" } } as const;
