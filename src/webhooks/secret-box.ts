import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

// Endpoint signing secrets (and later Stripe keys) are sealed with AES-256-GCM under a
// key derived from WARDEN_SECRET_KEY, so a copy of the database alone reveals none.
// Format: v1.<iv>.<ciphertext>.<tag>, each base64url.

export class SecretBox {
  private readonly key: Buffer;

  constructor(secretKey: string) {
    this.key = Buffer.from(hkdfSync("sha256", secretKey, "warden", "secret-box v1", 32));
  }

  seal(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    const sealed = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return ["v1", iv, sealed, cipher.getAuthTag()].map((part) => (typeof part === "string" ? part : part.toString("base64url"))).join(".");
  }

  open(sealed: string): string {
    const [version, iv, data, tag] = sealed.split(".");
    if (version !== "v1" || !iv || data === undefined || !tag) throw new Error("sealed secret has an unknown format");
    const decipher = createDecipheriv("aes-256-gcm", this.key, Buffer.from(iv, "base64url"));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    return Buffer.concat([decipher.update(Buffer.from(data, "base64url")), decipher.final()]).toString("utf8");
  }
}
