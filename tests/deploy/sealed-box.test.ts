// The sealed box GitHub requires of a secret (tools/deploy/sealed-box.ts): what libsodium seals opens
// here, and what this seals opens with the key pair alone. The two vectors were sealed by libsodium
// itself (PyNaCl 1.5's SealedBox, Debian's python3-nacl) to the key pair whose private key is the
// bytes 0 to 31, so that the format, not only a round trip, is held to libsodium's.
import nacl from "tweetnacl";
import { describe, expect, it } from "vitest";
import { openSealed, seal } from "../../tools/deploy/sealed-box.ts";

const keyPair = nacl.box.keyPair.fromSecretKey(Uint8Array.from({ length: 32 }, (_, index) => index));
const publicKey = Buffer.from(keyPair.publicKey).toString("base64");
const CONNECTION_STRING = "postgresql://postgres.abc:p%40ss wörd@aws-0-eu.pooler.supabase.com:5432/postgres";

describe("a sealed box", () => {
  it("has the key pair libsodium sealed the vectors to", () => {
    expect(publicKey).toBe("j0DFrbaPJWJK5bIU6nZ6bslNgp09e14a0bpvPiE4KF8=");
  });

  it.each([
    ["an empty message", "", "28AQUsDCYpksnLN3o8wFe0E+UKg4ep7DM4DqNXK52RxqVEPz5CctyJB7lLMrx8eM"],
    [
      "a connection string, with a non-ASCII password",
      CONNECTION_STRING,
      "yDyZwGAgPHSLgKxZ8mDsklBo60hTYDCX2m4b5DtdKRiL85uDgEmgNp1i1BptEwadkOa5AAEiUouSVFA7v2jgoIygjJSoltv7MF1k5SjucRG6N331V7tlTuKUPQX/IGNyZcdqhK6U+LA7xJxZXBJw/xkbb5LHak+DkZQWRUSc4DcI",
    ],
  ])("libsodium's seal of %s opens here", (_, message, sealed) => {
    expect(openSealed(sealed, keyPair)).toBe(message);
  });

  it.each([
    ["an empty message", ""],
    ["a secret key", "sb_secret_0123456789abcdefghijklmnopqrstuv"],
    ["a connection string", CONNECTION_STRING],
    ["a long value", "x".repeat(10_000)],
  ])(
    "%s: sealed, it opens to itself, is 48 bytes longer, and never seals the same way twice",
    (_, message) => {
      const sealed = seal(message, publicKey);
      expect(openSealed(sealed, keyPair)).toBe(message);
      expect(Buffer.from(sealed, "base64").length).toBe(Buffer.byteLength(message) + 48);
      expect(seal(message, publicKey)).not.toBe(sealed);
    },
  );

  it.each([
    ["another key pair", (sealed: string) => openSealed(sealed, nacl.box.keyPair())],
    [
      "a changed byte",
      (sealed: string) => {
        const bytes = Buffer.from(sealed, "base64");
        bytes[bytes.length - 1]! ^= 1;
        return openSealed(bytes.toString("base64"), keyPair);
      },
    ],
  ])("does not open with %s", (_, open) => {
    expect(open(seal("sb_secret_x", publicKey))).toBeNull();
  });

  it("refuses a key that is no X25519 public key", () => {
    expect(() => seal("x", Buffer.alloc(16).toString("base64"))).toThrow(/16 bytes: a sealed box needs 32/);
  });
});
