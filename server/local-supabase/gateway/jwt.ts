// Verifies HS256 JSON Web Tokens as PostgREST does (Auth/Jwt.hs), with node:crypto only, and
// answers with PostgREST's own error code and message when a token is refused.
import { createHmac, timingSafeEqual } from "node:crypto";
import { decodeJsonPart, type Claims } from "../../../src/lib/jwt-payload.ts";

export type { Claims };

export type JwtCheck = { claims: Claims } | { code: "PGRST301" | "PGRST303"; message: string };

/** PostgREST accepts this much clock difference on exp, nbf and iat. */
const ALLOWED_SKEW_SECONDS = 30;

/** The time claims PostgREST checks, in its order; the first failure is reported. */
const TIME_CLAIMS = [
  {
    name: "exp",
    fails: (at: number, now: number) => now - ALLOWED_SKEW_SECONDS > at,
    message: "JWT expired",
  },
  {
    name: "nbf",
    fails: (at: number, now: number) => now + ALLOWED_SKEW_SECONDS < at,
    message: "JWT not yet valid",
  },
  {
    name: "iat",
    fails: (at: number, now: number) => now + ALLOWED_SKEW_SECONDS < at,
    message: "JWT issued at future",
  },
];

export function verifyJwt(token: string, secret: string, nowSeconds = Date.now() / 1000): JwtCheck {
  if (token === "") return { code: "PGRST301", message: "Empty JWT is sent in Authorization header" };
  const parts = token.split(".");
  if (parts.length !== 3)
    return { code: "PGRST301", message: `Expected 3 parts in JWT; got ${parts.length}` };
  const [header, payload, signature] = parts as [string, string, string];
  if (
    decodeJsonPart(header)?.alg !== "HS256" ||
    !signatureMatches(`${header}.${payload}`, signature, secret)
  ) {
    return { code: "PGRST301", message: "JWT cryptographic operation failed" };
  }
  const claims = decodeJsonPart(payload);
  if (!claims) return { code: "PGRST303", message: "Parsing claims failed" };
  for (const { name, fails, message } of TIME_CLAIMS) {
    const at = claims[name];
    if (at === undefined) continue;
    if (typeof at !== "number")
      return { code: "PGRST303", message: `The JWT '${name}' claim must be a number` };
    if (fails(at, Math.floor(nowSeconds))) return { code: "PGRST303", message };
  }
  return { claims };
}

function signatureMatches(signedPart: string, signature: string, secret: string): boolean {
  const expected = createHmac("sha256", secret).update(signedPart).digest();
  const given = Buffer.from(signature, "base64url");
  // timingSafeEqual needs equal lengths; the length of an HMAC is no secret.
  return given.length === expected.length && timingSafeEqual(given, expected);
}
