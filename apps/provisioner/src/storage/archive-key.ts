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
  /**
   * During a rotation, the key headers were encrypted for before (C4GH_ARCHIVE_PREVIOUS_SECRET_KEY_FILE):
   * it still opens them, nothing is encrypted for it. Empty otherwise.
   */
  previousSecretKeys?: Buffer[];
}

/** Every secret key that opens a stored header: the archive key, then the previous one. */
export function archiveSecretKeys(key: ArchiveKey): Buffer[] {
  return [key.secretKey, ...(key.previousSecretKeys ?? [])];
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
  previous?: { keyFile: string; passphraseFile?: string },
): Promise<ArchiveKey> {
  const secretKey = await loadSecretKey(keyFile, passphraseFile, '');
  const publicKey = publicKeyOf(secretKey);
  const previousSecretKeys =
    previous === undefined
      ? []
      : [await loadSecretKey(previous.keyFile, previous.passphraseFile, 'PREVIOUS_')];
  return { publicKey, secretKey, publicKeyFile: publicKeyFile(publicKey), previousSecretKeys };
}

/** One secret key file; errors name the setting (C4GH_ARCHIVE_<which>SECRET_KEY_FILE). */
async function loadSecretKey(
  keyFile: string,
  passphraseFile: string | undefined,
  which: '' | 'PREVIOUS_',
): Promise<Buffer> {
  let passphrase: string | undefined;
  if (passphraseFile !== undefined) {
    passphrase = (
      await readFile(passphraseFile, 'utf8').catch((error: NodeJS.ErrnoException) => {
        throw new Error(
          `C4GH_ARCHIVE_${which}PASSPHRASE_FILE ${passphraseFile} cannot be read (${error.code})`,
        );
      })
    ).split(/\r?\n/)[0];
  }
  const text = await readFile(keyFile).catch((error: NodeJS.ErrnoException) => {
    throw new Error(
      `C4GH_ARCHIVE_${which}SECRET_KEY_FILE ${keyFile} cannot be read (${error.code})`,
    );
  });
  try {
    return await parseSecretKey(text, passphrase);
  } catch (error) {
    if (error instanceof Crypt4ghError)
      throw new Error(`C4GH_ARCHIVE_${which}SECRET_KEY_FILE ${keyFile}: ${error.message}`);
    throw error;
  }
}
