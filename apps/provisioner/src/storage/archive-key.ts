import { readFile } from 'node:fs/promises';
import { Crypt4ghError, parseSecretKey, publicKeyFile, publicKeyOf } from '@app/crypt4gh';

/** The archive's Crypt4GH key pair in archive mode (STORAGE_ENCRYPTION=crypt4gh). */
export interface ArchiveKey {
  /** What every stored header is encrypted for; served at /.well-known/c4gh-recipient. */
  publicKey: Buffer;
  /** Opens stored and deposited headers (to re-wrap them); never leaves this process. */
  secretKey: Buffer;
  /** The public key as a c4gh-v1 key file (what depositors and readers' tools take). */
  publicKeyFile: string;
}

export const ARCHIVE_KEY = Symbol('ARCHIVE_KEY');

/**
 * The archive key from its key file (c4gh-v1, encrypted when `passphraseFile` is given; the
 * passphrase is the file's first line), read once at start: a missing file, a wrong passphrase
 * or a malformed key stops the process with a message naming the setting.
 */
export async function loadArchiveKey(
  keyFile: string,
  passphraseFile?: string,
): Promise<ArchiveKey> {
  let passphrase: string | undefined;
  if (passphraseFile !== undefined) {
    passphrase = (
      await readFile(passphraseFile, 'utf8').catch((error: NodeJS.ErrnoException) => {
        throw new Error(
          `C4GH_ARCHIVE_PASSPHRASE_FILE ${passphraseFile} cannot be read (${error.code})`,
        );
      })
    ).split(/\r?\n/)[0];
  }
  const text = await readFile(keyFile).catch((error: NodeJS.ErrnoException) => {
    throw new Error(`C4GH_ARCHIVE_SECRET_KEY_FILE ${keyFile} cannot be read (${error.code})`);
  });
  let secretKey: Buffer;
  try {
    secretKey = await parseSecretKey(text, passphrase);
  } catch (error) {
    if (error instanceof Crypt4ghError)
      throw new Error(`C4GH_ARCHIVE_SECRET_KEY_FILE ${keyFile}: ${error.message}`);
    throw error;
  }
  const publicKey = publicKeyOf(secretKey);
  return { publicKey, secretKey, publicKeyFile: publicKeyFile(publicKey) };
}
