import Ajv, { type Options } from "ajv";
import addFormats from "ajv-formats";
import type { FastifySchemaCompiler } from "fastify";

// Two validators: bodies are strict JSON (no type coercion, unknown fields refused, not
// stripped), while query strings and path parameters arrive as text and are coerced.
const common: Options = { allErrors: false, strict: false, removeAdditional: false, useDefaults: true };

const bodyAjv = addFormats.default(new Ajv.default({ ...common, coerceTypes: false }));
const textAjv = addFormats.default(new Ajv.default({ ...common, coerceTypes: true }));

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => (httpPart === "body" ? bodyAjv : textAjv).compile(schema as object);
