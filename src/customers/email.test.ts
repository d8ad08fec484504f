import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DIALECTS, seedWorkspace, testApi, testServices } from "../test-support/harness.js";
import { isEmailShape, normaliseEmail } from "./email.js";

describe("address normalisation", () => {
  test("folds ASCII case and Gmail's dots; keeps +tags; leaves other characters as they are", () => {
    assert.equal(normaliseEmail(" Ada.Lovelace@GoogleMail.com "), "adalovelace@gmail.com");
    assert.equal(normaliseEmail("Ada+Work@Example.COM"), "ada+work@example.com");
    // The Kelvin sign lower-cases to an ASCII k in Unicode; it is not the letter K.
    assert.equal(normaliseEmail("\u212Anown@example.com"), "\u212Anown@example.com");
    assert.equal(isEmailShape("\u212Anown@example.com"), false);
  });
});

for (const dialect of DIALECTS) {
  describe(`one normalisation for lookups and grants (${dialect})`, () => {
    test("a look-alike of a known address finds nothing, and a grant to it is refused", async () => {
      const { services } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const base = `/api/v1/tools/${ws.tool}`;
      assert.equal((await api.request({ method: "POST", url: `${base}/grants`, key: ws.testKey, payload: { email: "known@example.com" } })).statusCode, 201);
      assert.equal((await api.request({ url: `${base}/customers/KNOWN%40example.com`, key: ws.testKey })).statusCode, 200);
      const lookAlike = await api.request({ url: `${base}/customers/%E2%84%AAnown%40example.com`, key: ws.testKey });
      assert.equal(lookAlike.statusCode, 404, lookAlike.body);
      const granted = await api.request({ method: "POST", url: `${base}/grants`, key: ws.testKey, payload: { email: "\u212Anown@example.com" } });
      assert.equal(granted.statusCode, 400, granted.body);
      assert.equal(granted.json().error.param, "email");
    });
  });
}
