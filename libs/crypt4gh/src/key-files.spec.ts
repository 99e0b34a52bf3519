import {
  Crypt4ghError,
  generateKeyPair,
  parsePublicKey,
  parseSecretKey,
  publicKeyFile,
  publicKeyOf,
  secretKeyFile,
} from '@app/crypt4gh';

/** A c4gh-v1 secret key file around `fields` (each a 2-byte big-endian length and its bytes). */
function keyFile(...fields: Buffer[]): string {
  const encoded = fields.map((field) => {
    const length = Buffer.alloc(2);
    length.writeUInt16BE(field.length);
    return Buffer.concat([length, field]);
  });
  const body = Buffer.concat([Buffer.from('c4gh-v1'), ...encoded]).toString('base64');
  return `-----BEGIN CRYPT4GH PRIVATE KEY-----\n${body}\n-----END CRYPT4GH PRIVATE KEY-----\n`;
}

async function fault(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof Crypt4ghError) return error.fault;
    throw error;
  }
  throw new Error('accepted');
}

describe('Crypt4GH key files', () => {
  const keys = generateKeyPair();

  it('reads back the public key files and the secret key files it writes, and raw 32-byte keys', async () => {
    expect(parsePublicKey(publicKeyFile(keys.publicKey)).equals(keys.publicKey)).toBe(true);
    expect(parsePublicKey(keys.publicKey).equals(keys.publicKey)).toBe(true);
    expect((await parseSecretKey(keys.secretKey)).equals(keys.secretKey)).toBe(true);
    expect(publicKeyOf(keys.secretKey).equals(keys.publicKey)).toBe(true);
    const plain = await secretKeyFile(keys.secretKey, { comment: 'archive' });
    expect((await parseSecretKey(plain)).equals(keys.secretKey)).toBe(true);
    const sealed = await secretKeyFile(keys.secretKey, { passphrase: 'pass' });
    expect(sealed).not.toContain(keys.secretKey.toString('base64'));
    expect((await parseSecretKey(Buffer.from(sealed), 'pass')).equals(keys.secretKey)).toBe(true);
    expect(await fault(parseSecretKey(sealed, 'wrong'))).toBe('passphrase');
    expect(await fault(parseSecretKey(sealed))).toBe('passphrase');
  });

  it('refuses public keys that are not 32 bytes of a Crypt4GH public key file', () => {
    const refuse = (input: string | Buffer) =>
      expect(() => parsePublicKey(input)).toThrow(Crypt4ghError);
    refuse(Buffer.alloc(31));
    refuse('hello');
    refuse(
      `-----BEGIN CRYPT4GH PUBLIC KEY-----\n${Buffer.alloc(31).toString('base64')}\n-----END CRYPT4GH PUBLIC KEY-----`,
    );
    refuse(
      `-----BEGIN OPENSSH PRIVATE KEY-----\n${Buffer.alloc(32).toString('base64')}\n-----END OPENSSH PRIVATE KEY-----`,
    );
    refuse('-----BEGIN CRYPT4GH PUBLIC KEY-----\n!!!!\n-----END CRYPT4GH PUBLIC KEY-----');
  });

  it('refuses hostile secret key files before deriving anything from them', async () => {
    const salted = (rounds: number) => {
      const options = Buffer.alloc(20);
      options.writeUInt32BE(rounds);
      return options;
    };
    const sealedKey = Buffer.alloc(60);
    const cases: [string, string][] = [
      [
        keyFile(
          Buffer.from('bcrypt'),
          salted(2 ** 31),
          Buffer.from('chacha20_poly1305'),
          sealedKey,
        ),
        'bad-key',
      ],
      [
        keyFile(Buffer.from('bcrypt'), salted(0), Buffer.from('chacha20_poly1305'), sealedKey),
        'bad-key',
      ],
      [
        keyFile(Buffer.from('argon2'), salted(1), Buffer.from('chacha20_poly1305'), sealedKey),
        'unsupported',
      ],
      [keyFile(Buffer.from('scrypt'), salted(0), Buffer.from('aes256'), sealedKey), 'unsupported'],
      [
        keyFile(
          Buffer.from('scrypt'),
          salted(0),
          Buffer.from('chacha20_poly1305'),
          Buffer.alloc(10),
        ),
        'bad-key',
      ],
      [keyFile(Buffer.from('none'), Buffer.from('none'), Buffer.alloc(31)), 'bad-key'],
      [keyFile(Buffer.from('none')), 'bad-key'],
    ];
    for (const [file, expected] of cases)
      expect(await fault(parseSecretKey(file, 'pass'))).toBe(expected);
    // Another magic; a field whose length runs past the end of the file.
    const otherMagic = keyFile(Buffer.from('none'), Buffer.from('none'), Buffer.alloc(32)).replace(
      Buffer.from('c4gh-v1').toString('base64').slice(0, 8),
      Buffer.from('c5gh-v1').toString('base64').slice(0, 8),
    );
    expect(await fault(parseSecretKey(otherMagic))).toBe('bad-key');
    const cut = Buffer.concat([Buffer.from('c4gh-v1'), Buffer.from([0xff, 0xff, 1, 2])]).toString(
      'base64',
    );
    expect(
      await fault(
        parseSecretKey(
          `-----BEGIN CRYPT4GH PRIVATE KEY-----\n${cut}\n-----END CRYPT4GH PRIVATE KEY-----`,
        ),
      ),
    ).toBe('bad-key');
  });
});
