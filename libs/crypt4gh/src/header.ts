/**
 * The Crypt4GH header (crypt4gh.tex, "Header"): magic, version, packet count, then packets each
 * encrypted for one reader with X25519 + BLAKE2b + ChaCha20-IETF-Poly1305. A packet carries a data
 * key or an edit list. Packets a reader's keys do not open are someone else's and are kept aside.
 */
import { createCipheriv, createDecipheriv, type KeyObject } from 'node:crypto';
import { cipherKey } from './body';
import { ByteReader } from './byte-reader';
import { randomSlice } from './random';
import {
  Crypt4ghError,
  KEY_LENGTH,
  MAC_LENGTH,
  MAGIC,
  MAX_HEADER_LENGTH,
  MAX_HEADER_PACKETS,
  MAX_PACKET_LENGTH,
  NONCE_LENGTH,
  VERSION,
} from './format';
import { generateSecretKey, packetKey, publicKeyOf } from './x25519';

/** The format's numbers: the one header cipher, the two packet types, the one data cipher. */
const CODE = { x25519Chacha20: 0, dataKeyPacket: 0, editListPacket: 1, chacha20Data: 0 } as const;
/** length, method, writer's public key, nonce ... MAC */
const SEALED_OVERHEAD = 4 + 4 + KEY_LENGTH + NONCE_LENGTH + MAC_LENGTH;

/** What a reader learns from a header: the data keys, the edit list if any. */
export interface HeaderContent {
  dataKeys: Buffer[];
  /** Bytes to skip, keep, skip, keep ... of the plain-text (crypt4gh.tex, "Edit List"). */
  editList?: number[];
}

export interface OpenedHeader extends HeaderContent {
  /** The packets none of the keys opened (another reader's), as they were. */
  foreignPackets: Buffer[];
}

function uint32(value: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32LE(value);
  return bytes;
}

function dataKeyPayload(key: Buffer): Buffer {
  if (key.length !== KEY_LENGTH)
    throw new Crypt4ghError('bad-key', `A data key is ${KEY_LENGTH} bytes`);
  return Buffer.concat([uint32(CODE.dataKeyPacket), uint32(CODE.chacha20Data), key]);
}

function editListPayload(lengths: number[]): Buffer {
  const payload = Buffer.alloc(8 + 8 * lengths.length);
  payload.writeUInt32LE(CODE.editListPacket, 0);
  payload.writeUInt32LE(lengths.length, 4);
  lengths.forEach((length, i) => {
    if (!Number.isSafeInteger(length) || length < 0)
      throw new Crypt4ghError('edit-list', `Edit list length ${length} is not a byte count`);
    payload.writeBigUInt64LE(BigInt(length), 8 + 8 * i);
  });
  return payload;
}

/** One packet sealed with `key` (the writer's and the reader's shared key) under a fresh nonce. */
function seal(payload: Buffer, key: KeyObject, writerPublic: Buffer): Buffer {
  const nonce = randomSlice(NONCE_LENGTH);
  const cipher = createCipheriv('chacha20-poly1305', key, nonce, { authTagLength: MAC_LENGTH });
  const sealed = Buffer.concat([cipher.update(payload), cipher.final(), cipher.getAuthTag()]);
  return Buffer.concat([
    uint32(SEALED_OVERHEAD + payload.length),
    uint32(CODE.x25519Chacha20),
    writerPublic,
    nonce,
    sealed,
  ]);
}

/** The payload of `packet` (length field included) if one of `secrets` opens it. */
function open(packet: Buffer, secrets: readonly SecretKey[]): Buffer | undefined {
  if (packet.readUInt32LE(4) !== CODE.x25519Chacha20) return undefined;
  const writerPublic = packet.subarray(8, 8 + KEY_LENGTH);
  const nonce = packet.subarray(8 + KEY_LENGTH, 8 + KEY_LENGTH + NONCE_LENGTH);
  const sealed = packet.subarray(8 + KEY_LENGTH + NONCE_LENGTH);
  for (const { secret, publicKey } of secrets) {
    let key: Buffer;
    try {
      key = packetKey(secret, writerPublic, publicKey, writerPublic);
    } catch (error) {
      // A writer key on a low-order point opens nothing: the packet is not ours.
      if (error instanceof Crypt4ghError && error.fault === 'bad-key') return undefined;
      throw error;
    }
    const decipher = createDecipheriv('chacha20-poly1305', cipherKey(key), nonce, {
      authTagLength: MAC_LENGTH,
    });
    decipher.setAuthTag(sealed.subarray(sealed.length - MAC_LENGTH));
    const payload = decipher.update(sealed.subarray(0, sealed.length - MAC_LENGTH));
    try {
      decipher.final();
      return payload;
    } catch {
      // Another reader's packet (its MAC does not verify with this key): try the next key.
    }
  }
  return undefined;
}

/** A reader's secret key with its public key (derived once, used for every packet). */
export interface SecretKey {
  secret: Buffer;
  publicKey: Buffer;
}

export function secretKey(secret: Uint8Array): SecretKey {
  return { secret: Buffer.from(secret), publicKey: publicKeyOf(secret) };
}

function serialize(packets: readonly Buffer[]): Buffer {
  if (packets.length === 0)
    throw new Crypt4ghError('bad-packet-count', 'A Crypt4GH header needs at least one packet');
  return Buffer.concat([MAGIC, uint32(VERSION), uint32(packets.length), ...packets]);
}

/** A HeaderWriter's writer public key and its packet key for each reader (HeaderWriter.keys). */
export interface HeaderKeys {
  writerPublic: Uint8Array;
  packetKeys: Uint8Array[];
}

/**
 * Writes headers for a fixed set of readers (their public keys) with one writer key pair, made
 * when it is created and never stored: the X25519 exchange with each reader is done once, and
 * each header after that costs one ChaCha20-Poly1305 seal per packet under a fresh random nonce.
 * crypt4gh.tex leaves the writer's key pair to the writer (the reference CLI's `encrypt --sk`
 * reuses one for every file); each file keeps a data key of its own
 * (docs/decisions/crypt4gh-writer-key-per-area.md).
 */
export class HeaderWriter {
  private readonly writerPublic: Buffer;
  private readonly packetKeys: Buffer[];
  /** The packet keys as the cipher takes them (cipherKey), made once. */
  private readonly sealingKeys: KeyObject[];

  /**
   * With the readers' public keys: a new writer key pair. With the `keys` of another
   * HeaderWriter (handed to a thread of the same process): the same writer, no exchange.
   */
  constructor(readers: readonly Uint8Array[] | HeaderKeys) {
    if ('packetKeys' in readers) {
      if (readers.packetKeys.length === 0 || readers.writerPublic.length !== KEY_LENGTH)
        throw new Crypt4ghError('no-key', 'A Crypt4GH header needs at least one reader');
      this.writerPublic = Buffer.from(readers.writerPublic);
      this.packetKeys = readers.packetKeys.map((key) => Buffer.from(key));
      this.sealingKeys = this.packetKeys.map(cipherKey);
      return;
    }
    if (readers.length === 0)
      throw new Crypt4ghError('no-key', 'A Crypt4GH header needs at least one reader');
    const writerSecret = generateSecretKey();
    this.writerPublic = publicKeyOf(writerSecret);
    this.packetKeys = readers.map((reader) =>
      packetKey(writerSecret, reader, reader, this.writerPublic),
    );
    writerSecret.fill(0);
    this.sealingKeys = this.packetKeys.map(cipherKey);
  }

  /**
   * What another thread of this process needs to write the same headers (new HeaderWriter(keys)):
   * the packet keys are secret (they open every data key this writer seals), so they are only
   * ever posted to a worker thread, never stored, logged or sent anywhere else.
   */
  get keys(): HeaderKeys {
    return { writerPublic: this.writerPublic, packetKeys: this.packetKeys };
  }

  /** A header holding `content` for every reader, with `extraPackets` (as they are) after. */
  build(content: HeaderContent, extraPackets: readonly Buffer[] = []): Buffer {
    if (content.dataKeys.length === 0)
      throw new Crypt4ghError('no-key', 'A Crypt4GH header needs a data key');
    const payloads = content.dataKeys.map(dataKeyPayload);
    if (content.editList !== undefined) payloads.push(editListPayload(content.editList));
    const packets: Buffer[] = [];
    for (const key of this.sealingKeys) {
      for (const payload of payloads) packets.push(seal(payload, key, this.writerPublic));
    }
    return serialize([...packets, ...extraPackets]);
  }
}

/**
 * A header for every reader in `readers` (their public keys), holding `content`, with a writer
 * key pair of its own, thrown away afterwards (a HeaderWriter for one header).
 */
export function buildHeader(
  content: HeaderContent,
  readers: readonly Uint8Array[],
  extraPackets: readonly Buffer[] = [],
): Buffer {
  return new HeaderWriter(readers).build(content, extraPackets);
}

/** The encrypted packets of the header at the start of `reader`, which is left just past it. */
export async function readHeaderPackets(reader: ByteReader): Promise<Buffer[]> {
  const preamble = await reader.readExactly(16, 'the header preamble');
  if (!preamble.subarray(0, 8).equals(MAGIC)) {
    throw new Crypt4ghError(
      'bad-magic',
      'Not a Crypt4GH stream: it does not start with "crypt4gh"',
    );
  }
  const version = preamble.readUInt32LE(8);
  if (version !== VERSION)
    throw new Crypt4ghError(
      'bad-version',
      `Crypt4GH version ${version} is not supported (only ${VERSION})`,
    );
  const count = preamble.readUInt32LE(12);
  if (count === 0 || count > MAX_HEADER_PACKETS) {
    throw new Crypt4ghError(
      'bad-packet-count',
      `A header of ${count} packets is refused (1 to ${MAX_HEADER_PACKETS} accepted)`,
    );
  }
  const packets: Buffer[] = [];
  let total = 0;
  for (let i = 0; i < count; i++) {
    const lengthField = await reader.readExactly(
      4,
      `the length of header packet ${i + 1} of ${count}`,
    );
    const length = lengthField.readUInt32LE(0);
    if (length < SEALED_OVERHEAD || length > MAX_PACKET_LENGTH) {
      throw new Crypt4ghError(
        'bad-packet',
        `Header packet ${i + 1} says it is ${length} bytes (${SEALED_OVERHEAD} to ${MAX_PACKET_LENGTH} accepted)`,
      );
    }
    total += length;
    if (total > MAX_HEADER_LENGTH) {
      throw new Crypt4ghError(
        'bad-packet',
        `The header's packets come to more than ${MAX_HEADER_LENGTH} bytes (by packet ${i + 1} of ${count})`,
      );
    }
    const rest = await reader.readExactly(
      length - 4,
      `header packet ${i + 1} of ${count} (${length} bytes)`,
    );
    packets.push(Buffer.concat([lengthField, rest]));
  }
  return packets;
}

/** The packets of a header held on its own (stored apart from its body): nothing may follow it. */
export async function headerPackets(header: Uint8Array): Promise<Buffer[]> {
  const reader = new ByteReader([header]);
  const packets = await readHeaderPackets(reader);
  if (!(await reader.atEnd())) {
    throw new Crypt4ghError(
      'trailing-bytes',
      `${header.length - reader.position} bytes follow the header's last packet`,
    );
  }
  return packets;
}

function parseEditList(payload: Buffer): number[] {
  if (payload.length < 8)
    throw new Crypt4ghError('edit-list', 'The edit list packet holds no count');
  const count = payload.readUInt32LE(4);
  if (8 + 8 * count > payload.length) {
    throw new Crypt4ghError(
      'edit-list',
      `The edit list says it holds ${count} lengths; its packet holds ${Math.floor((payload.length - 8) / 8)}`,
    );
  }
  const lengths: number[] = [];
  for (let i = 0; i < count; i++) {
    const length = payload.readBigUInt64LE(8 + 8 * i);
    if (length > BigInt(Number.MAX_SAFE_INTEGER))
      throw new Crypt4ghError('edit-list', `Edit list length ${length} is past any file`);
    lengths.push(Number(length));
  }
  return lengths;
}

/**
 * The data keys and edit list that `secrets` open in `packets`. Refused: no data key for these keys,
 * two edit lists, a packet type or data cipher this version does not know.
 */
export function openHeader(
  packets: readonly Buffer[],
  secrets: readonly SecretKey[],
): OpenedHeader {
  const dataKeys: Buffer[] = [];
  const foreignPackets: Buffer[] = [];
  let editList: number[] | undefined;
  for (const packet of packets) {
    const payload = open(packet, secrets);
    if (!payload) {
      foreignPackets.push(packet);
      continue;
    }
    if (payload.length < 4)
      throw new Crypt4ghError('bad-packet', 'A header packet is too short to hold its type');
    const type = payload.readUInt32LE(0);
    if (type === CODE.dataKeyPacket) {
      if (payload.length < 8 + KEY_LENGTH)
        throw new Crypt4ghError('bad-packet', 'A data key packet is too short to hold a key');
      const method = payload.readUInt32LE(4);
      if (method !== CODE.chacha20Data)
        throw new Crypt4ghError('unsupported', `Data encryption method ${method} is not supported`);
      dataKeys.push(Buffer.from(payload.subarray(8, 8 + KEY_LENGTH)));
    } else if (type === CODE.editListPacket) {
      if (editList !== undefined)
        throw new Crypt4ghError(
          'two-edit-lists',
          'The header holds two edit lists (the format allows one)',
        );
      editList = parseEditList(payload);
    } else {
      throw new Crypt4ghError('unsupported', `Header packet type ${type} is not supported`);
    }
  }
  if (dataKeys.length === 0) {
    throw new Crypt4ghError(
      'no-key',
      'No header packet holds a data key for the given key(s): the file was not encrypted for them',
    );
  }
  return { dataKeys, editList, foreignPackets };
}

/**
 * The header re-encrypted for `readers`: the same data keys and edit list; the body is untouched.
 * `keepForeign` keeps the packets of readers the given secrets do not open (the reference CLI's
 * `reencrypt` without `--trim`).
 */
export async function rewrapHeader(
  header: Uint8Array,
  secrets: readonly SecretKey[],
  readers: readonly Uint8Array[],
  options: { keepForeign?: boolean } = {},
): Promise<Buffer> {
  const opened = openHeader(await headerPackets(header), secrets);
  return buildHeader(opened, readers, options.keepForeign ? opened.foreignPackets : []);
}
