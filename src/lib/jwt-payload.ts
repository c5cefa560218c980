// The payload of a JSON Web Token, read without checking its signature: for telling what a key
// claims to be (the build's check of PUBLIC_ variables), and, once verified, what it grants.

export type Claims = Record<string, unknown>;

/** A base64url-encoded JSON object, or null when it is anything else. */
export function decodeJsonPart(part: string): Claims | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Claims) : null;
  } catch {
    return null;
  }
}
