import type { SourceData } from '@smithy/types';
import {
  createHash,
  createHmac,
  createSecretKey,
  type Hash,
  type Hmac,
  type KeyObject,
} from 'node:crypto';

const bytes = (data: SourceData): string | Uint8Array =>
  typeof data === 'string'
    ? data
    : ArrayBuffer.isView(data)
      ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
      : new Uint8Array(data);

/**
 * HMAC keys as KeyObjects, by the key the signer holds: Signature V4 signs every request with the
 * day's derived key, one cached Uint8Array, and Node 24's createHmac given bytes first tries them
 * as a KeyObject and a CryptoKey (a thrown and caught error each), several times the MAC's own
 * cost. A string key (the secret itself, once a day) is not cached.
 */
const keyObjects = new WeakMap<object, KeyObject>();

function hmacKey(secret: SourceData): KeyObject | string {
  if (typeof secret === 'string') return secret;
  let key = keyObjects.get(secret);
  if (key === undefined) {
    key = createSecretKey(bytes(secret) as Uint8Array);
    keyObjects.set(secret, key);
  }
  return key;
}

/**
 * SHA-256 and its HMAC as the AWS SDK and its signer ask for them (`sha256` of the client's and
 * the signer's configuration), over node:crypto as the SDK's own, with keys made once (above).
 */
export class NodeSha256 {
  private hash: Hash | Hmac;

  constructor(private readonly secret?: SourceData) {
    this.hash = this.start();
  }

  update(data: SourceData): void {
    this.hash.update(bytes(data));
  }

  digest(): Promise<Uint8Array> {
    return Promise.resolve(this.hash.digest());
  }

  reset(): void {
    this.hash = this.start();
  }

  private start(): Hash | Hmac {
    return this.secret === undefined
      ? createHash('sha256')
      : createHmac('sha256', hmacKey(this.secret));
  }
}
