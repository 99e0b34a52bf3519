import {
  createHash,
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  KeyObject,
  randomBytes,
} from 'node:crypto';
import { Crypt4ghError, KEY_LENGTH } from './format';

// Node takes raw X25519 keys only wrapped in DER: these are the fixed ASN.1 prefixes of a
// PKCS#8 private key and an SPKI public key for the X25519 OID (1.3.101.110, RFC 8410).
const PKCS8_X25519 = Buffer.from('302e020100300506032b656e04220420', 'hex');
const SPKI_X25519 = Buffer.from('302a300506032b656e032100', 'hex');

/**
 * Secret keys already made into Node's key objects, by the buffer that holds them: OpenSSL takes
 * milliseconds to decode a PKCS#8 key, and a reader's secret key (the archive's) opens every
 * header it is given. Keyed by the buffer itself (never its bytes), dropped with it; a caller
 * never refills a secret key's buffer with another key.
 */
const secretKeyObjects = new WeakMap<Uint8Array, KeyObject>();

/** A raw X25519 key as Node's key object (`secret` takes a secret key, else a public one). */
function keyObject(key: Uint8Array, secret: boolean): KeyObject {
  const what = secret ? 'An X25519 secret key' : 'An X25519 public key';
  if (key.length !== KEY_LENGTH) {
    throw new Crypt4ghError('bad-key', `${what} must be ${KEY_LENGTH} bytes, not ${key.length}`);
  }
  const der = Buffer.concat([secret ? PKCS8_X25519 : SPKI_X25519, key]);
  return secret
    ? createPrivateKey({ key: der, format: 'der', type: 'pkcs8' })
    : createPublicKey({ key: der, format: 'der', type: 'spki' });
}

function secretKeyObject(secret: Uint8Array): KeyObject {
  let object = secretKeyObjects.get(secret);
  if (object === undefined) secretKeyObjects.set(secret, (object = keyObject(secret, true)));
  return object;
}

/** A new secret key: 32 random bytes (X25519 clamps them itself). */
export function generateSecretKey(): Buffer {
  return randomBytes(KEY_LENGTH);
}

/** The public key of a secret key (X25519(secret, 9), RFC 7748 section 6.1). */
export function publicKeyOf(secret: Uint8Array): Buffer {
  const spki = createPublicKey(keyObject(secret, true)).export({ format: 'der', type: 'spki' });
  return spki.subarray(SPKI_X25519.length);
}

/**
 * The key a header packet is encrypted with: the first 32 bytes of
 * BLAKE2b-512(X25519(own secret, peer public) || reader's public key || writer's public key).
 * The writer and the reader compute it from opposite halves of the two key pairs.
 */
export function packetKey(
  ownSecret: Uint8Array,
  peerPublic: Uint8Array,
  readerPublic: Uint8Array,
  writerPublic: Uint8Array,
): Buffer {
  let shared: Buffer;
  try {
    shared = diffieHellman({
      privateKey: secretKeyObject(ownSecret),
      publicKey: keyObject(peerPublic, false),
    });
  } catch (error) {
    if (error instanceof Crypt4ghError) throw error;
    // OpenSSL refuses a low-order point (the shared secret would be all zeros).
    throw new Crypt4ghError(
      'bad-key',
      'The X25519 public key is a low-order point: no shared key can come from it',
    );
  }
  if (shared.every((byte) => byte === 0)) {
    throw new Crypt4ghError(
      'bad-key',
      'The X25519 public key is a low-order point: no shared key can come from it',
    );
  }
  return createHash('blake2b512')
    .update(shared)
    .update(readerPublic)
    .update(writerPublic)
    .digest()
    .subarray(0, KEY_LENGTH);
}
