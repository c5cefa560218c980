// libsodium's sealed box (crypto_box_seal), which GitHub's API requires of every secret it is given
// ("Encrypting secrets for the REST API"): an X25519 key pair made for this one message, the
// message boxed (XSalsa20-Poly1305) from it to the repository's public key, under a nonce that is
// BLAKE2b-192 of both public keys, and the one-time public key sent before the box. Only the
// holder of the repository's private key (GitHub) opens it. tweetnacl does the box, blakejs the
// nonce: small, pure JavaScript, no install script.
import { blake2b } from "blakejs";
import nacl from "tweetnacl";

/** The nonce both sides compute: BLAKE2b with a 24-byte output over the one-time and the recipient's public keys. */
function nonceOf(oneTimePublicKey: Uint8Array, recipientPublicKey: Uint8Array): Uint8Array {
  const both = new Uint8Array(2 * nacl.box.publicKeyLength);
  both.set(oneTimePublicKey);
  both.set(recipientPublicKey, nacl.box.publicKeyLength);
  return blake2b(both, undefined, nacl.box.nonceLength);
}

/** `message` sealed to `publicKey` (base64, as GitHub gives it): base64, as GitHub takes it. */
export function seal(message: string, publicKey: string): string {
  const recipient = Buffer.from(publicKey, "base64");
  if (recipient.length !== nacl.box.publicKeyLength)
    throw new Error(
      `A public key of ${recipient.length} bytes: a sealed box needs ${nacl.box.publicKeyLength}.`,
    );
  const oneTime = nacl.box.keyPair();
  const box = nacl.box(
    new TextEncoder().encode(message),
    nonceOf(oneTime.publicKey, recipient),
    recipient,
    oneTime.secretKey,
  );
  return Buffer.concat([oneTime.publicKey, box]).toString("base64");
}

/** What GitHub does with a sealed value: the message, or null when it does not open with this key pair. */
export function openSealed(sealed: string, keyPair: nacl.BoxKeyPair): string | null {
  const bytes = Buffer.from(sealed, "base64");
  const oneTimePublicKey = bytes.subarray(0, nacl.box.publicKeyLength);
  const opened = nacl.box.open(
    bytes.subarray(nacl.box.publicKeyLength),
    nonceOf(oneTimePublicKey, keyPair.publicKey),
    oneTimePublicKey,
    keyPair.secretKey,
  );
  return opened === null ? null : new TextDecoder().decode(opened);
}
