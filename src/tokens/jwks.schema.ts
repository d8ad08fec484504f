import { Type } from "@sinclair/typebox";

// The JWK Set (RFC 7517) of the keys that sign access tokens.
export const Jwks = Type.Object(
  {
    keys: Type.Array(
      Type.Object(
        {
          kty: Type.Literal("OKP"),
          crv: Type.Literal("Ed25519"),
          x: Type.String({ description: "The public key, base64url" }),
          kid: Type.String({ description: "The key's id: the kid of the tokens it signed (its RFC 7638 thumbprint)" }),
          alg: Type.Literal("EdDSA"),
          use: Type.Literal("sig"),
        },
        { additionalProperties: false },
      ),
      { description: "The key that signs now, and for 20 minutes after a rotation the one before it" },
    ),
  },
  { additionalProperties: false },
);
