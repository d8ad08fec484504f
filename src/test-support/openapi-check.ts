import assert from "node:assert/strict";
import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import type { FastifyInstance, LightMyRequestResponse } from "fastify";

interface OpenApiDocument {
  paths: Record<string, Record<string, { responses?: Record<string, { content?: Record<string, { schema: object }> }> }>>;
  components?: { schemas?: Record<string, object> };
}

const checked = new WeakMap<FastifyInstance, { doc: OpenApiDocument; validators: Map<string, ValidateFunction> }>();

/** The app's OpenAPI document, validated once by a real OpenAPI 3.1 validator. */
export async function openApiDocumentOf(app: FastifyInstance): Promise<OpenApiDocument> {
  let entry = checked.get(app);
  if (!entry) {
    const doc = app.swagger() as unknown as OpenApiDocument;
    const result = await new Validator().validate(structuredClone(doc) as unknown as Parameters<Validator["validate"]>[0]);
    assert.equal(result.valid, true, `OpenAPI document is invalid: ${JSON.stringify(result.errors, null, 2)}`);
    entry = { doc, validators: new Map() };
    checked.set(app, entry);
  }
  return entry.doc;
}

function matchPath(doc: OpenApiDocument, path: string): string | undefined {
  return Object.keys(doc.paths).find((template) => {
    const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}/?$`);
    return pattern.test(path);
  });
}

function validatorFor(app: FastifyInstance, doc: OpenApiDocument, key: string, schema: object): ValidateFunction {
  const entry = checked.get(app);
  if (!entry) throw new Error("document not loaded");
  let validate = entry.validators.get(key);
  if (!validate) {
    const ajv = addFormats.default(new Ajv2020({ strict: false, allErrors: true }));
    validate = ajv.compile({ ...schema, components: doc.components });
    entry.validators.set(key, validate);
  }
  return validate;
}

/**
 * Every answer the tests see carries a Request-Id and matches the document: a described
 * operation's answer matches its response schema, and any error matches the Error schema.
 */
export async function checkAgainstOpenApi(app: FastifyInstance, method: string, url: string, response: LightMyRequestResponse): Promise<void> {
  assert.match(String(response.headers["request-id"] ?? ""), /^req_[0-9A-Za-z]{24}$/, `no Request-Id on ${method} ${url}`);
  const doc = await openApiDocumentOf(app);
  const path = new URL(url, "http://x").pathname;
  const template = matchPath(doc, path);
  const operation = template ? doc.paths[template]?.[method.toLowerCase()] : undefined;
  let schema = operation?.responses?.[String(response.statusCode)]?.content?.["application/json"]?.schema;
  let key = `${method} ${template} ${response.statusCode}`;
  if (!schema && response.statusCode >= 400) {
    schema = { $ref: "#/components/schemas/Error" };
    key = "error";
  }
  if (!schema && operation?.responses?.[String(response.statusCode)]) {
    assert.equal(response.body, "", `${method} ${url} ${response.statusCode} is described without a body`);
    return;
  }
  if (!schema) {
    assert.ok(!operation, `${method} ${url} answered ${response.statusCode}, which the document does not describe`);
    return;
  }
  const validate = validatorFor(app, doc, key, schema);
  const body: unknown = response.json();
  assert.ok(validate(body), `${method} ${url} ${response.statusCode} does not match the document: ${JSON.stringify(validate.errors)}\n${response.body}`);
}
