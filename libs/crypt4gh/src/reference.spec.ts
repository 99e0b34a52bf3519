// The project's Crypt4GH against the reference implementation (EGA-archive/crypt4gh v1.7, its
// CLI run here, its keys and files from tests/_common): both directions, key files, re-wrapped
// headers, edit lists, and the plain-text range headers the archive serves.
import { randomBytes, randomInt } from 'node:crypto';
import {
  createReadStream,
  createWriteStream,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  CIPHER_SEGMENT_SIZE,
  Crypt4ghError,
  decrypt,
  encrypt,
  encryptStream,
  generateKeyPair,
  headerPackets,
  HeaderWriter,
  KEY_LENGTH,
  NONCE_LENGTH,
  openHeader,
  openStream,
  parsePublicKey,
  parseSecretKey,
  plaintextRange,
  publicKeyFile,
  publicKeyOf,
  rewrap,
  secretKey,
  secretKeyFile,
  SecretKeyFileOptions,
  SEGMENT_SIZE,
  SegmentEncryptor,
} from '@app/crypt4gh';
import { referenceCrypt4gh, ReferenceCrypt4gh } from '../../../test/support/crypt4gh-reference';
import { REAL_IO_MS } from '../../../test/support/timeouts';

// Each test runs the reference CLI (a Python process) a few times, the range test 20 times; a
// bcrypt key file takes 100 rounds of a JavaScript bcrypt-pbkdf to write and again to read (4 s
// each at load 20).
jest.setTimeout(2 * REAL_IO_MS);

let reference: ReferenceCrypt4gh;
let dir: string;
/**
 * The reference's test users: `sec` and `pub` are its key files (bcrypt, passphrases "alice" and
 * "bob"); `plainSec` the same secret in an unencrypted key file written here, which the CLI runs
 * with (its bcrypt takes seconds per run on a loaded machine).
 */
interface User {
  secret: Buffer;
  publicKey: Buffer;
  sec: string;
  pub: string;
  plainSec: string;
}
let alice: User;
let bob: User;
let counter = 0;

const path = (name: string) => join(dir, `${counter++}-${name}`);
function file(name: string, bytes: Buffer | string): string {
  const at = path(name);
  writeFileSync(at, bytes);
  return at;
}

async function ourEncrypt(plain: string, readers: Buffer[]): Promise<string> {
  const out = path('ours.c4gh');
  await pipeline(Readable.from(encrypt(createReadStream(plain), readers)), createWriteStream(out));
  return out;
}

async function ourDecrypt(encrypted: string, secrets: Buffer[]): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of decrypt(createReadStream(encrypted), secrets)) parts.push(part);
  return Buffer.concat(parts);
}

/** The reference CLI run with `args`, reading `stdin` and writing `stdout` (files). */
function theirs(args: string[], stdin: string, stdout: string): Promise<void> {
  return reference.cli(args, { stdin, stdout });
}

async function theirDecrypt(
  encrypted: string,
  secretKeyPath: string,
  passphrase?: string,
): Promise<Buffer> {
  const out = path('theirs.plain');
  await reference.cli(['decrypt', '--sk', secretKeyPath], {
    stdin: encrypted,
    stdout: out,
    passphrase,
  });
  return readFileSync(out);
}

beforeAll(async () => {
  reference = referenceCrypt4gh();
  dir = mkdtempSync(join(tmpdir(), 'crypt4gh-reference-spec-'));
  const load = async (name: string, passphrase: string) => {
    const sec = join(reference.common, `${name}.sec`);
    const pub = join(reference.common, `${name}.pub`);
    const secret = await parseSecretKey(readFileSync(sec, 'utf8'), passphrase);
    const plainSec = file(`${name}.plain.sec`, await secretKeyFile(secret));
    return { secret, publicKey: parsePublicKey(readFileSync(pub)), sec, pub, plainSec };
  };
  alice = await load('alice', 'alice');
  bob = await load('bob', 'bob');
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('key files', () => {
  it("reads the reference's bcrypt-encrypted keys, whose public keys match its .pub files", async () => {
    expect(publicKeyOf(alice.secret).equals(alice.publicKey)).toBe(true);
    expect(publicKeyOf(bob.secret).equals(bob.publicKey)).toBe(true);
    await expect(parseSecretKey(readFileSync(alice.sec), 'bob')).rejects.toMatchObject({
      fault: 'passphrase',
    });
    await expect(parseSecretKey(readFileSync(alice.sec))).rejects.toMatchObject({
      fault: 'passphrase',
    });
  });

  it.each([
    ['scrypt', 'a passphrase'],
    ['unencrypted', ''],
  ])("reads the reference's %s key files", async (_kind, passphrase) => {
    const sec = path('ref.sec');
    const pub = path('ref.pub');
    await reference.script(
      [
        '-c',
        'import sys; from crypt4gh.keys.c4gh import generate; generate(sys.argv[1], sys.argv[2], passphrase=sys.argv[3].encode() or None)',
        sec,
        pub,
        passphrase,
      ],
      { stdin: '/dev/null', stdout: path('stdout') },
    );
    const secret = await parseSecretKey(readFileSync(sec, 'utf8'), passphrase || undefined);
    expect(publicKeyOf(secret).equals(parsePublicKey(readFileSync(pub, 'utf8')))).toBe(true);
  });

  it.each<[string, SecretKeyFileOptions]>([
    ['scrypt', { passphrase: 'correct horse', kdf: 'scrypt' as const }],
    ['bcrypt', { passphrase: 'correct horse', kdf: 'bcrypt' as const, comment: 'for the archive' }],
    ['no passphrase', {}],
  ])('writes key files (%s) the reference CLI decrypts with', async (_kind, options) => {
    const keys = generateKeyPair();
    const who = { sec: file('ours.sec', await secretKeyFile(keys.secretKey, options)) };
    expect(
      (await parseSecretKey(readFileSync(who.sec), options.passphrase)).equals(keys.secretKey),
    ).toBe(true);
    const plain = file('plain', randomBytes(70_000));
    const encrypted = path('theirs.c4gh');
    await theirs(
      ['encrypt', '--recipient_pk', file('ours.pub', publicKeyFile(keys.publicKey))],
      plain,
      encrypted,
    );
    expect(
      (await theirDecrypt(encrypted, who.sec, options.passphrase)).equals(readFileSync(plain)),
    ).toBe(true);
  });
});

describe('files both ways', () => {
  it.each([0, 1, SEGMENT_SIZE, SEGMENT_SIZE + 1, 300_001])(
    'encrypts %i bytes for two readers, and the reference CLI decrypts them for each',
    async (size) => {
      const plain = file('plain', randomBytes(size));
      const encrypted = await ourEncrypt(plain, [alice.publicKey, bob.publicKey]);
      expect((await theirDecrypt(encrypted, alice.plainSec)).equals(readFileSync(plain))).toBe(
        true,
      );
      expect((await theirDecrypt(encrypted, bob.plainSec)).equals(readFileSync(plain))).toBe(true);
    },
  );

  it("decrypts the reference CLI's files: the test file, random bytes, for several recipients", async () => {
    for (const plain of [
      join(reference.common, 'testfile.abcd'),
      file('plain', randomBytes(200_003)),
    ]) {
      const encrypted = path('theirs.c4gh');
      await theirs(
        ['encrypt', '--sk', bob.plainSec, '--recipient_pk', alice.pub, '--recipient_pk', bob.pub],
        plain,
        encrypted,
      );
      expect((await ourDecrypt(encrypted, [alice.secret])).equals(readFileSync(plain))).toBe(true);
      expect((await ourDecrypt(encrypted, [bob.secret])).equals(readFileSync(plain))).toBe(true);
      const stranger = generateKeyPair();
      await expect(ourDecrypt(encrypted, [stranger.secretKey])).rejects.toMatchObject({
        fault: 'no-key',
      });
    }
  });

  it('decrypts what the reference encrypts of a range, rearranges with an edit list, and buries in an edit list', async () => {
    const abcd = join(reference.common, 'testfile.abcd');
    const abbbc = readFileSync(join(reference.common, 'testfile.abbbc'));
    const ranged = path('ranged.c4gh');
    await theirs(
      ['encrypt', '--sk', bob.plainSec, '--recipient_pk', alice.pub, '--range', '65535-131074'],
      abcd,
      ranged,
    );
    expect((await ourDecrypt(ranged, [alice.secret])).equals(abbbc)).toBe(true);

    const whole = path('whole.c4gh');
    await theirs(['encrypt', '--sk', bob.plainSec, '--recipient_pk', bob.pub], abcd, whole);
    const rearranged = path('rearranged.c4gh');
    await theirs(['rearrange', '--sk', bob.plainSec, '--range', '65535-131074'], whole, rearranged);
    expect((await ourDecrypt(rearranged, [bob.secret])).equals(abbbc)).toBe(true);

    // tests/_common/edit_list_gen.py: a message in pieces between random filler, kept by an edit list.
    const message = ["Let's have", ' beers ', 'in the sauna!', ' or ', 'Dinner ', 'at 7pm?'];
    const buried = path('buried.c4gh');
    await reference.script([join(reference.common, 'edit_list_gen.py'), bob.plainSec, alice.pub], {
      stdin: file('message', message.join('\n') + '\n'),
      stdout: buried,
    });
    expect((await ourDecrypt(buried, [alice.secret])).toString()).toBe(message.join(''));
  });
});

describe('one writer key pair for many files', () => {
  it('writes files whose headers share a writer key and each hold their own data key, which the reference CLI decrypts (the writer copied to a thread too)', async () => {
    const writer = new HeaderWriter([alice.publicKey, bob.publicKey]);
    // As a copy thread is given it: its keys through a structured clone (Uint8Arrays then).
    const copied = new HeaderWriter(structuredClone(writer.keys));
    const files = [0, 1000, SEGMENT_SIZE + 7].map((size, i) => {
      const plain = randomBytes(size);
      const dataKey = randomBytes(KEY_LENGTH);
      const encryptor = new SegmentEncryptor(dataKey);
      const header = (i === 1 ? copied : writer).build({ dataKeys: [dataKey] });
      const encrypted = file(
        'shared-writer.c4gh',
        Buffer.concat([header, ...encryptor.push(plain), ...encryptor.end()]),
      );
      return { plain, dataKey, header, encrypted };
    });
    const writerKeys = new Set<string>();
    const nonces = new Set<string>();
    for (const { plain, dataKey, header, encrypted } of files) {
      const packets = await headerPackets(header);
      // Each packet: length, method, the writer's public key, a nonce, then the sealed payload.
      for (const packet of packets) {
        writerKeys.add(packet.subarray(8, 8 + KEY_LENGTH).toString('hex'));
        nonces.add(packet.subarray(8 + KEY_LENGTH, 8 + KEY_LENGTH + NONCE_LENGTH).toString('hex'));
      }
      expect(openHeader(packets, [secretKey(bob.secret)]).dataKeys).toEqual([dataKey]);
      expect((await theirDecrypt(encrypted, alice.plainSec)).equals(plain)).toBe(true);
      expect((await theirDecrypt(encrypted, bob.plainSec)).equals(plain)).toBe(true);
    }
    expect(writerKeys.size).toBe(1);
    // Two readers, three files: six packets under two packet keys, never one nonce twice.
    expect(nonces.size).toBe(6);
    expect(new Set(files.map(({ dataKey }) => dataKey.toString('hex'))).size).toBe(3);
  });
});

describe('re-wrapped headers', () => {
  it("re-wraps a reference file's header for another reader, leaving the body byte for byte", async () => {
    const plain = file('plain', randomBytes(150_000));
    const encrypted = path('theirs.c4gh');
    await theirs(['encrypt', '--sk', bob.plainSec, '--recipient_pk', bob.pub], plain, encrypted);
    const rewrapped = path('rewrapped.c4gh');
    await pipeline(
      Readable.from(rewrap(createReadStream(encrypted), [bob.secret], [alice.publicKey])),
      createWriteStream(rewrapped),
    );
    const before = readFileSync(encrypted);
    const after = readFileSync(rewrapped);
    const oldHeader = (await openStream([before], [bob.secret])).headerLength;
    const newHeader = (await openStream([after], [alice.secret])).headerLength;
    expect(after.subarray(newHeader).equals(before.subarray(oldHeader))).toBe(true);
    expect((await theirDecrypt(rewrapped, alice.plainSec)).equals(readFileSync(plain))).toBe(true);
    await expect(theirDecrypt(rewrapped, bob.plainSec)).rejects.toThrow(/exited 1/);
  });

  it('decrypts a header the reference CLI re-encrypted for two readers', async () => {
    const plain = file('plain', randomBytes(80_000));
    const encrypted = await ourEncrypt(plain, [bob.publicKey]);
    const reencrypted = path('reencrypted.c4gh');
    await theirs(
      ['reencrypt', '--sk', bob.plainSec, '--recipient_pk', bob.pub, '--recipient_pk', alice.pub],
      encrypted,
      reencrypted,
    );
    expect((await ourDecrypt(reencrypted, [alice.secret])).equals(readFileSync(plain))).toBe(true);
  });
});

describe('plain-text ranges', () => {
  it(
    'gives 20 ranges, mid-segment starts and ends among them, that the reference CLI decrypts to exactly those bytes',
    async () => {
      const size = 20 * SEGMENT_SIZE + 777;
      const plain = randomBytes(size);
      const { header, body } = encryptStream([plain], [alice.publicKey]);
      const parts: Buffer[] = [];
      for await (const part of body) parts.push(part);
      const storedBody = Buffer.concat(parts);
      const opened = openHeader(await headerPackets(header), [secretKey(alice.secret)]);
      const mid = () => randomInt(1, SEGMENT_SIZE - 1);
      const ranges: [number, number][] = [
        [0, 0],
        [0, size - 1],
        [size - 1, size - 1],
        [SEGMENT_SIZE - 1, SEGMENT_SIZE],
        [SEGMENT_SIZE, 2 * SEGMENT_SIZE - 1],
        [3 * SEGMENT_SIZE + mid(), 3 * SEGMENT_SIZE + SEGMENT_SIZE - 1],
        [5 * SEGMENT_SIZE + 100, 5 * SEGMENT_SIZE + 200],
        [19 * SEGMENT_SIZE + mid(), size - 1],
      ];
      while (ranges.length < 20) {
        const start = randomInt(0, 19) * SEGMENT_SIZE + mid();
        ranges.push([start, randomInt(start, size)]);
      }
      for (const [start, end] of ranges) {
        const range = plaintextRange(opened, size, start, end, [bob.publicKey]);
        const sent = storedBody.subarray(range.bodyStart, range.bodyEnd);
        expect({
          start,
          end,
          sent: sent.length <= end - start + 1 + 2 * CIPHER_SEGMENT_SIZE,
        }).toEqual({ start, end, sent: true });
        const got = await theirDecrypt(
          file('range.c4gh', Buffer.concat([range.header, sent])),
          bob.plainSec,
        );
        expect({
          start,
          end,
          length: got.length,
          exact: got.equals(plain.subarray(start, end + 1)),
        }).toEqual({
          start,
          end,
          length: end - start + 1,
          exact: true,
        });
      }
    },
    4 * REAL_IO_MS,
  );

  it('is refused for a file that carries an edit list already', async () => {
    const header = (
      await openStream(
        [readFileSync(await ourEncrypt(file('plain', randomBytes(10)), [alice.publicKey]))],
        [alice.secret],
      )
    ).header;
    expect(() =>
      plaintextRange({ ...header, editList: [1, 2] }, 10, 0, 1, [bob.publicKey]),
    ).toThrow(Crypt4ghError);
  });
});
