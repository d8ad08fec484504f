import { type TSchema, Type } from "@sinclair/typebox";

// Shared pieces of the API contract. Dates are ISO 8601 strings in UTC with milliseconds.
export const IsoDate = Type.String({ format: "date-time", examples: ["2026-11-21T12:00:00.000Z"] });

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const ErrorBody = Type.Object(
  {
    error: Type.Object(
      {
        type: Type.Union(
          ["invalid_request_error", "authentication_error", "usage_limit_error", "plan_limit_error", "not_found", "rate_limit_error", "api_error"].map((t) =>
            Type.Literal(t),
          ),
        ),
        message: Type.String(),
        param: Type.Optional(Type.String({ description: "The offending parameter, for parameter errors" })),
        usage: Type.Optional(Type.Ref("MeterUsage", { description: "For usage_limit_error (402): the meter's usage, unchanged by the refused spend" })),
      },
      { additionalProperties: false },
    ),
  },
  { $id: "Error", additionalProperties: false, description: "Every error answer has this shape" },
);

export const ToolParams = Type.Object({ tool: Type.String({ minLength: 1, maxLength: 64, description: "Tool id" }) }, { additionalProperties: false });

/**
 * Error answers every authenticated route can give. 503 is the database out of reach
 * (`database_unavailable`, with `Retry-After`): a client should retry, not give up.
 */
export const commonErrors = {
  400: Type.Ref("Error"),
  401: Type.Ref("Error"),
  404: Type.Ref("Error"),
  429: Type.Ref("Error"),
  500: Type.Ref("Error"),
  503: Type.Ref("Error"),
};
