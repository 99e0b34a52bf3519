import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decrypt, generateKeyPair, secretKeyFile } from '@app/crypt4gh';
import { HEADERS_DIR } from '../../../apps/provisioner/src/storage/archive-storage';

/** An archive key made for one test file, and the settings that turn archive mode on with it. */
export interface ArchiveMode {
  env: { STORAGE_ENCRYPTION: 'crypt4gh'; C4GH_ARCHIVE_SECRET_KEY_FILE: string };
  secretKey: Buffer;
}

/**
 * Archive mode as `npm start` runs it (STORAGE_ENCRYPTION=crypt4gh, an unencrypted c4gh-v1 key
 * file): the hostile-testing rounds ran against `npm start`, so the suite measures the worker
 * the same way. The key file is written into `dir` (the test's temporary directory).
 */
export async function archiveMode(dir: string): Promise<ArchiveMode> {
  const { secretKey } = generateKeyPair();
  const keyFile = join(dir, 'c4gh-archive.sec');
  writeFileSync(keyFile, await secretKeyFile(secretKey), { mode: 0o600 });
  return {
    env: { STORAGE_ENCRYPTION: 'crypt4gh', C4GH_ARCHIVE_SECRET_KEY_FILE: keyFile },
    secretKey,
  };
}

const HEADER_MARK = `/${HEADERS_DIR}/`;

/**
 * Everything under `root` as text, with every Crypt4GH body found there (a body has its header at
 * `<dataset>/.provisioner/c4gh-headers/<path>`, published or staged) decrypted with
 * `secretKey`: a leak check over archive-mode storage that still sees the data files' plain-text.
 * Also returns how many bodies were decrypted (a check that archive mode was on at all).
 */
export async function storedPlaintext(
  root: string,
  secretKey: Buffer,
): Promise<{ text: string; bodies: number }> {
  if (!existsSync(root)) return { text: '', bodies: 0 };
  const pieces: string[] = [];
  let bodies = 0;
  for (const entry of readdirSync(root, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    pieces.push(readFileSync(path, 'latin1'));
    const at = path.indexOf(HEADER_MARK);
    if (at < 0) continue;
    const body = join(path.slice(0, at), path.slice(at + HEADER_MARK.length));
    const plain: Buffer[] = [];
    for await (const piece of decrypt([readFileSync(body)], [secretKey], {
      header: readFileSync(path),
    }))
      plain.push(piece);
    pieces.push(Buffer.concat(plain).toString('latin1'));
    bodies += 1;
  }
  return { text: pieces.join('\n'), bodies };
}
