/**
 * Crypt4GH key files: public keys as `-----BEGIN CRYPT4GH PUBLIC KEY-----` PEM around the base64 of
 * the 32 key bytes, secret keys in the `c4gh-v1` format (unencrypted, or encrypted with
 * ChaCha20-Poly1305 under a key derived from a passphrase by scrypt, bcrypt-pbkdf or
 * PBKDF2-HMAC-SHA256), and raw 32-byte keys. Format: the reference implementation's key
 * document (crypt4gh.readthedocs.io, keys.rst) and crypt4gh/keys/c4gh.py of EGA-archive/crypt4gh.
 */
import { pbkdf as bcryptPbkdf } from 'bcrypt-pbkdf';
import { createCipheriv, createDecipheriv, pbkdf2, randomBytes, scrypt } from 'node:crypto';
import { Crypt4ghError, KEY_LENGTH, MAC_LENGTH, NONCE_LENGTH } from './format';
import { generateSecretKey, publicKeyOf } from './x25519';

const C4GH_MAGIC = Buffer.from('c4gh-v1', 'ascii');
const PUBLIC_PEM = 'CRYPT4GH PUBLIC KEY';
const SECRET_PEM = 'CRYPT4GH PRIVATE KEY';
const CIPHER = 'chacha20_poly1305';
const SALT_LENGTH = 16;

export type KeyDerivation = 'scrypt' | 'bcrypt' | 'pbkdf2_hmac_sha256';

/**
 * Rounds a key file may ask for: a hostile file naming 2^32 rounds would hold the process for
 * hours. The reference writes 100 for bcrypt (OpenSSH's default is 16) and 100,000 for PBKDF2.
 */
const MAX_ROUNDS: Record<KeyDerivation, number> = {
  scrypt: 0,
  bcrypt: 10_000,
  pbkdf2_hmac_sha256: 10_000_000,
};
const BCRYPT_ROUNDS = 100;

export interface KeyPair {
  secretKey: Buffer;
  publicKey: Buffer;
}

/** A new X25519 key pair for Crypt4GH. */
export function generateKeyPair(): KeyPair {
  const secretKey = generateSecretKey();
  return { secretKey, publicKey: publicKeyOf(secretKey) };
}

function pem(label: string, body: Buffer): string {
  return `-----BEGIN ${label}-----\n${body.toString('base64')}\n-----END ${label}-----\n`;
}

/** The base64 inside a PEM armour; undefined when `text` is not PEM. */
function unarmour(text: string): { label: string; body: Buffer } | undefined {
  const lines = text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
  const begin = /^-----BEGIN ([A-Z0-9 ]+)-----$/.exec(lines[0] ?? '');
  const end = /^-----END ([A-Z0-9 ]+)-----$/.exec(lines[lines.length - 1] ?? '');
  if (!begin || !end || lines.length < 3 || begin[1] !== end[1]) return undefined;
  const base64 = lines.slice(1, -1).join('');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(base64)) {
    throw new Crypt4ghError('bad-key', `The ${begin[1]} block is not base64`);
  }
  return { label: begin[1], body: Buffer.from(base64, 'base64') };
}

/**
 * A key given as 32 raw bytes (`raw`), or the PEM block of a key file (`armoured`): what both
 * kinds of key input share before their formats part.
 */
function keyInput(
  file: string | Uint8Array,
  kind: 'public' | 'secret',
): { raw: Buffer } | { armoured: { label: string; body: Buffer } } {
  const text =
    typeof file === 'string' ||
    file.length > KEY_LENGTH ||
    Buffer.from(file).subarray(0, 11).toString('latin1') === '-----BEGIN ';
  if (!text) {
    if (file.length !== KEY_LENGTH) {
      throw new Crypt4ghError(
        'bad-key',
        `A raw ${kind} key is ${KEY_LENGTH} bytes, not ${file.length}`,
      );
    }
    return { raw: Buffer.from(file) };
  }
  const armoured = unarmour(typeof file === 'string' ? file : Buffer.from(file).toString('utf8'));
  if (!armoured)
    throw new Crypt4ghError('bad-key', `Not a Crypt4GH ${kind} key file (no PEM block)`);
  return { armoured };
}

/** A public key from a Crypt4GH public key file or 32 raw bytes. */
export function parsePublicKey(file: string | Uint8Array): Buffer {
  const input = keyInput(file, 'public');
  if ('raw' in input) return input.raw;
  const { armoured } = input;
  if (armoured.label !== PUBLIC_PEM) {
    throw new Crypt4ghError(
      'bad-key',
      `Not a Crypt4GH public key: the file holds a ${armoured.label}`,
    );
  }
  if (armoured.body.length !== KEY_LENGTH) {
    throw new Crypt4ghError(
      'bad-key',
      `A Crypt4GH public key is ${KEY_LENGTH} bytes, this one ${armoured.body.length}`,
    );
  }
  return armoured.body;
}

/** A Crypt4GH public key file for `publicKey`. */
export function publicKeyFile(publicKey: Uint8Array): string {
  if (publicKey.length !== KEY_LENGTH)
    throw new Crypt4ghError('bad-key', `A public key is ${KEY_LENGTH} bytes`);
  return pem(PUBLIC_PEM, Buffer.from(publicKey));
}

/** Reads the c4gh-v1 fields: a 2-byte big-endian length, then that many bytes. */
class FieldReader {
  private offset = C4GH_MAGIC.length;
  constructor(private readonly bytes: Buffer) {}

  next(what: string): Buffer {
    if (this.offset + 2 > this.bytes.length)
      throw new Crypt4ghError('bad-key', `The c4gh-v1 key ends before its ${what}`);
    const length = this.bytes.readUInt16BE(this.offset);
    const start = this.offset + 2;
    if (start + length > this.bytes.length) {
      throw new Crypt4ghError('bad-key', `The c4gh-v1 key's ${what} runs past the end of the key`);
    }
    this.offset = start + length;
    return this.bytes.subarray(start, start + length);
  }
}

function field(value: Buffer): Buffer {
  const length = Buffer.alloc(2);
  length.writeUInt16BE(value.length);
  return Buffer.concat([length, value]);
}

function deriveKey(
  kdf: KeyDerivation,
  passphrase: string,
  salt: Buffer,
  rounds: number,
): Promise<Buffer> {
  const secret = Buffer.from(passphrase, 'utf8');
  switch (kdf) {
    case 'scrypt':
      // The reference's parameters: N = 2^14, r = 8, p = 1 (the file's rounds field is ignored).
      return new Promise((resolve, reject) =>
        scrypt(secret, salt, KEY_LENGTH, { N: 1 << 14, r: 8, p: 1 }, (error, key) =>
          error ? reject(error) : resolve(key),
        ),
      );
    case 'bcrypt': {
      const key = Buffer.alloc(KEY_LENGTH);
      if (bcryptPbkdf(secret, secret.length, salt, salt.length, key, KEY_LENGTH, rounds) !== 0) {
        return Promise.reject(
          new Crypt4ghError('bad-key', 'bcrypt-pbkdf refused the key file parameters'),
        );
      }
      return Promise.resolve(key);
    }
    case 'pbkdf2_hmac_sha256':
      return new Promise((resolve, reject) =>
        pbkdf2(secret, salt, rounds, KEY_LENGTH, 'sha256', (error, key) =>
          error ? reject(error) : resolve(key),
        ),
      );
  }
}

function isKdf(name: string): name is KeyDerivation {
  return name === 'scrypt' || name === 'bcrypt' || name === 'pbkdf2_hmac_sha256';
}

/**
 * The secret key in a c4gh-v1 key file (PEM) or 32 raw bytes. An encrypted file needs its
 * passphrase; a wrong one is refused as such (the key's MAC does not verify).
 */
export async function parseSecretKey(
  file: string | Uint8Array,
  passphrase?: string,
): Promise<Buffer> {
  const input = keyInput(file, 'secret');
  if ('raw' in input) return input.raw;
  const { armoured } = input;
  const bytes = armoured.body;
  if (!bytes.subarray(0, C4GH_MAGIC.length).equals(C4GH_MAGIC)) {
    throw new Crypt4ghError(
      'bad-key',
      `Not a c4gh-v1 secret key (the ${armoured.label} block does not start with c4gh-v1)`,
    );
  }
  const fields = new FieldReader(bytes);
  const kdfName = fields.next('key derivation name').toString('latin1');
  if (kdfName !== 'none' && !isKdf(kdfName)) {
    throw new Crypt4ghError(
      'unsupported',
      `The key file's key derivation "${kdfName}" is not supported`,
    );
  }
  let salt: Buffer = Buffer.alloc(0);
  let rounds = 0;
  if (kdfName !== 'none') {
    const options = fields.next('key derivation options');
    if (options.length < 5)
      throw new Crypt4ghError('bad-key', 'The key derivation options hold no salt');
    rounds = options.readUInt32BE(0);
    salt = options.subarray(4);
    if (kdfName !== 'scrypt' && (rounds < 1 || rounds > MAX_ROUNDS[kdfName])) {
      throw new Crypt4ghError(
        'bad-key',
        `The key file asks for ${rounds} ${kdfName} rounds (1 to ${MAX_ROUNDS[kdfName]} accepted)`,
      );
    }
  }
  const cipher = fields.next('cipher name').toString('latin1');
  const data = fields.next('key material');
  if (cipher === 'none') {
    if (kdfName !== 'none')
      throw new Crypt4ghError('bad-key', 'The key file names a key derivation but no cipher');
    if (data.length !== KEY_LENGTH)
      throw new Crypt4ghError(
        'bad-key',
        `The key material is ${data.length} bytes, not ${KEY_LENGTH}`,
      );
    return Buffer.from(data);
  }
  if (cipher !== CIPHER)
    throw new Crypt4ghError('unsupported', `The key file's cipher "${cipher}" is not supported`);
  if (kdfName === 'none')
    throw new Crypt4ghError('bad-key', 'The key file is encrypted but names no key derivation');
  if (data.length !== NONCE_LENGTH + KEY_LENGTH + MAC_LENGTH) {
    throw new Crypt4ghError(
      'bad-key',
      `The encrypted key material is ${data.length} bytes, not ${NONCE_LENGTH + KEY_LENGTH + MAC_LENGTH}`,
    );
  }
  if (passphrase === undefined)
    throw new Crypt4ghError('passphrase', 'The secret key is encrypted: a passphrase is needed');
  const key = await deriveKey(kdfName, passphrase, salt, rounds);
  const decipher = createDecipheriv('chacha20-poly1305', key, data.subarray(0, NONCE_LENGTH), {
    authTagLength: MAC_LENGTH,
  });
  decipher.setAuthTag(data.subarray(NONCE_LENGTH + KEY_LENGTH));
  const secret = decipher.update(data.subarray(NONCE_LENGTH, NONCE_LENGTH + KEY_LENGTH));
  try {
    decipher.final();
  } catch {
    throw new Crypt4ghError('passphrase', 'The passphrase does not open this secret key');
  }
  return secret;
}

export interface SecretKeyFileOptions {
  /** Without one the key is written unencrypted. */
  passphrase?: string;
  /** scrypt unless told (the reference's choice when it has scrypt). */
  kdf?: 'scrypt' | 'bcrypt';
  comment?: string;
}

/** A c4gh-v1 secret key file for `secretKey`. */
export async function secretKeyFile(
  secretKey: Uint8Array,
  options: SecretKeyFileOptions = {},
): Promise<string> {
  if (secretKey.length !== KEY_LENGTH)
    throw new Crypt4ghError('bad-key', `A secret key is ${KEY_LENGTH} bytes`);
  const comment =
    options.comment === undefined ? [] : [field(Buffer.from(options.comment, 'utf8'))];
  if (!options.passphrase) {
    const fields = [
      field(Buffer.from('none')),
      field(Buffer.from('none')),
      field(Buffer.from(secretKey)),
      ...comment,
    ];
    return pem(SECRET_PEM, Buffer.concat([C4GH_MAGIC, ...fields]));
  }
  const kdf = options.kdf ?? 'scrypt';
  const rounds = kdf === 'bcrypt' ? BCRYPT_ROUNDS : 0;
  const salt = randomBytes(SALT_LENGTH);
  const key = await deriveKey(kdf, options.passphrase, salt, rounds);
  const nonce = randomBytes(NONCE_LENGTH);
  const cipher = createCipheriv('chacha20-poly1305', key, nonce, { authTagLength: MAC_LENGTH });
  const sealed = Buffer.concat([
    nonce,
    cipher.update(secretKey),
    cipher.final(),
    cipher.getAuthTag(),
  ]);
  const kdfOptions = Buffer.alloc(4);
  kdfOptions.writeUInt32BE(rounds);
  const fields = [
    field(Buffer.from(kdf)),
    field(Buffer.concat([kdfOptions, salt])),
    field(Buffer.from(CIPHER)),
    field(sealed),
    ...comment,
  ];
  return pem(SECRET_PEM, Buffer.concat([C4GH_MAGIC, ...fields]));
}
