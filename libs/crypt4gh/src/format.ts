/**
 * The constants of the GA4GH Crypt4GH format, version 1 (crypt4gh.tex in samtools/hts-specs), and
 * the one error every refusal raises.
 */

/** `crypt4gh` in ASCII: the first eight bytes of every Crypt4GH file. */
export const MAGIC = Buffer.from('crypt4gh', 'ascii');
export const VERSION = 1;
/** Plain-text bytes per segment; only the last segment of a file may hold fewer. */
export const SEGMENT_SIZE = 65_536;
export const NONCE_LENGTH = 12;
export const MAC_LENGTH = 16;
/** A segment on disk: nonce, cipher-text, MAC. */
export const CIPHER_SEGMENT_SIZE = NONCE_LENGTH + SEGMENT_SIZE + MAC_LENGTH;
export const KEY_LENGTH = 32;

/**
 * What this reader accepts of a header it did not write. The format allows 2^32 packets of 4 GiB;
 * a real header holds one data key and at most one edit list per recipient, and an edit list of
 * 65,536 lengths fits in 512 KiB. Anything larger is refused before it is read into memory.
 */
export const MAX_HEADER_PACKETS = 1024;
export const MAX_PACKET_LENGTH = 1024 * 1024;
/** All packets together: 1,024 packets of 1 MiB would be 1 GiB held before any is opened. */
export const MAX_HEADER_LENGTH = 4 * 1024 * 1024;

export type Crypt4ghFault =
  | 'bad-magic'
  | 'bad-version'
  | 'bad-packet-count'
  | 'bad-packet'
  | 'truncated'
  | 'trailing-bytes'
  | 'no-key'
  | 'two-edit-lists'
  | 'edit-list'
  | 'edit-list-past-end'
  | 'segment-mac'
  | 'unsupported'
  | 'bad-key'
  | 'passphrase';

/** A refusal: the input is not Crypt4GH this library can read, or not for the keys it was given. */
export class Crypt4ghError extends Error {
  constructor(
    readonly fault: Crypt4ghFault,
    message: string,
  ) {
    super(message);
    this.name = 'Crypt4ghError';
  }
}

/** Cipher-text bytes of a body that holds `plaintextSize` plain-text bytes. */
export function bodySize(plaintextSize: number): number {
  const full = Math.floor(plaintextSize / SEGMENT_SIZE);
  const rest = plaintextSize % SEGMENT_SIZE;
  return full * CIPHER_SEGMENT_SIZE + (rest > 0 ? rest + NONCE_LENGTH + MAC_LENGTH : 0);
}

/** Plain-text bytes of a body of `size` cipher-text bytes (refused when no body has that size). */
export function plaintextSize(size: number): number {
  const full = Math.floor(size / CIPHER_SEGMENT_SIZE);
  const rest = size % CIPHER_SEGMENT_SIZE;
  if (rest > 0 && rest <= NONCE_LENGTH + MAC_LENGTH) {
    throw new Crypt4ghError(
      'truncated',
      `A Crypt4GH body of ${size} bytes ends in a segment too short to hold any data`,
    );
  }
  return full * SEGMENT_SIZE + (rest > 0 ? rest - NONCE_LENGTH - MAC_LENGTH : 0);
}
