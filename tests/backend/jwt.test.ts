// HS256 verification as PostgREST does it, and the Supabase CLI's standard local keys.
import { describe, expect, it } from "vitest";
import { verifyJwt } from "../../server/local-supabase/gateway/jwt.ts";
import {
  LOCAL_ANON_KEY,
  LOCAL_JWT_SECRET,
  LOCAL_SERVICE_ROLE_KEY,
} from "../../server/local-supabase/keys.ts";
import { signJwt } from "./helpers.ts";

const NOW = 1_900_000_000;

describe("the CLI's standard keys", () => {
  it.each([
    ["anon", LOCAL_ANON_KEY],
    ["service_role", LOCAL_SERVICE_ROLE_KEY],
  ])("%s is signed with the local secret", (role, key) => {
    expect(verifyJwt(key, LOCAL_JWT_SECRET, NOW)).toEqual({
      claims: { iss: "supabase-demo", role, exp: 1983812996 },
    });
  });
});

describe("verifyJwt", () => {
  it.each([
    // Valid, with no time claims at all.
    ["no time claims", () => signJwt({ role: "anon" }), { claims: { role: "anon" } }],
    // Expired, but within PostgREST's 30 s of allowed clock skew.
    ["just expired", () => signJwt({ exp: NOW - 30 }), { claims: { exp: NOW - 30 } }],
    // Expired beyond the skew.
    ["expired", () => signJwt({ exp: NOW - 31 }), { code: "PGRST303", message: "JWT expired" }],
    // Not valid yet.
    ["not yet valid", () => signJwt({ nbf: NOW + 31 }), { code: "PGRST303", message: "JWT not yet valid" }],
    // Issued in the future.
    [
      "issued in the future",
      () => signJwt({ iat: NOW + 31 }),
      { code: "PGRST303", message: "JWT issued at future" },
    ],
    // A time claim that is no number.
    [
      "exp as text",
      () => signJwt({ exp: "tomorrow" }),
      { code: "PGRST303", message: "The JWT 'exp' claim must be a number" },
    ],
    // Signed with another secret.
    [
      "forged",
      () => signJwt({ role: "service_role" }, "x".repeat(40)),
      { code: "PGRST301", message: "JWT cryptographic operation failed" },
    ],
    // Claims changed after signing.
    [
      "tampered",
      () => {
        const [header, , signature] = LOCAL_ANON_KEY.split(".");
        const claims = Buffer.from(JSON.stringify({ role: "service_role" })).toString("base64url");
        return `${header}.${claims}.${signature}`;
      },
      { code: "PGRST301", message: "JWT cryptographic operation failed" },
    ],
    // Unsigned ("alg": "none") tokens are never accepted.
    [
      "unsigned",
      () =>
        `${Buffer.from('{"alg":"none"}').toString("base64url")}.${Buffer.from('{"role":"service_role"}').toString("base64url")}.`,
      { code: "PGRST301", message: "JWT cryptographic operation failed" },
    ],
    // Not three parts.
    ["two parts", () => "a.b", { code: "PGRST301", message: "Expected 3 parts in JWT; got 2" }],
    // Nothing at all.
    ["empty", () => "", { code: "PGRST301", message: "Empty JWT is sent in Authorization header" }],
  ])("%s", (_, token, expected) => {
    expect(verifyJwt(token(), LOCAL_JWT_SECRET, NOW)).toEqual(expected);
  });
});
