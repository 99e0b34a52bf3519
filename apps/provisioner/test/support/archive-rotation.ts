import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  decrypt,
  generateKeyPair,
  headerPackets,
  openHeader,
  secretKey,
  secretKeyFile,
  type KeyPair,
} from '@app/crypt4gh';
import { referenceDecrypt } from '../../../../test/support/crypt4gh-reference';
import { rotateArchiveKey } from '../../src/archive/archive-key-rotation';
import { headerPath } from '../../src/storage/archive-storage';
import type { StorageSystem } from '../../src/storage/storage-system';

async function collect(parts: AsyncIterable<Buffer>): Promise<Buffer> {
  const all: Buffer[] = [];
  for await (const part of parts) all.push(part);
  return Buffer.concat(all);
}

function opensWith(header: Buffer, key: KeyPair): Promise<boolean> {
  return headerPackets(header).then((packets) => {
    try {
      openHeader(packets, [secretKey(key.secretKey)]);
      return true;
    } catch {
      return false;
    }
  });
}

/**
 * Rotates the archive key of a published archive-mode dataset at `dataset` (files `plain`, stored
 * for `old`) to a new key on `storage`, with a run that crashes after its first header, and checks
 * what issue 57 item 5 asks: no body byte rewritten (SHA-256 before and after), the interrupted
 * run resumed by running again (per header: done once, then "already"), both keys decrypting
 * while headers are half rotated (the key list the service holds), and the reference CLI
 * decrypting every file with the new key afterwards.
 */
export async function checkRotation(
  storage: StorageSystem,
  dataset: string,
  plain: Record<string, Buffer>,
  old: KeyPair,
  dir: string,
): Promise<void> {
  const paths = Object.keys(plain);
  const next = generateKeyPair();
  const bodyHash = async (path: string) =>
    createHash('sha256')
      .update((await storage.readObject(`${dataset}/${path}`))!)
      .digest('hex');
  const before = await Promise.all(paths.map(bodyHash));
  const header = async (path: string) =>
    (await storage.readObject(`${dataset}/${headerPath(path)}`))!;

  // A dry run counts and writes nothing.
  const dry = await rotateArchiveKey({ storage, to: next, from: [old.secretKey], dryRun: true });
  expect(dry).toEqual([
    { path: dataset, rewrapped: paths.length, already: 0, failed: [], plain: false },
  ]);
  for (const path of paths) expect(await opensWith(await header(path), old)).toBe(true);

  // A run that dies after re-wrapping one header (the process killed, the store gone).
  let replaced = 0;
  let first: Promise<void> | undefined;
  const dying: StorageSystem = {
    ...storage,
    readObject: (path, range) => storage.readObject(path, range),
    list: (path) => storage.list(path),
    description: storage.description,
    replaceObject: async (path, content) => {
      // Counted before it is written: headers are re-wrapped several at a time.
      if (replaced++ >= 1) throw new Error('killed');
      first = storage.replaceObject!(path, content);
      await first;
    },
  };
  await expect(
    rotateArchiveKey({ storage: dying, to: next, from: [old.secretKey] }),
  ).rejects.toThrow('killed');
  // The one write under way when it died has landed (or the rotation was not half done).
  await first;
  const opened = await Promise.all(
    paths.map(async (path) => [
      await opensWith(await header(path), next),
      await opensWith(await header(path), old),
    ]),
  );
  // Half rotated: one header for the new key only, the others for the old one only ...
  expect(opened.filter(([withNext]) => withNext)).toEqual([[true, false]]);
  // ... and the service's key list (the archive key, then the previous one) decrypts them all.
  for (const path of paths) {
    const body = (await storage.readObject(`${dataset}/${path}`))!;
    const decrypted = await collect(
      decrypt([body], [next.secretKey, old.secretKey], { header: await header(path) }),
    );
    expect(decrypted.equals(plain[path])).toBe(true);
  }

  // Run again: it resumes, leaving the one already done.
  const resumed = await rotateArchiveKey({ storage, to: next, from: [old.secretKey] });
  expect(resumed).toEqual([
    { path: dataset, rewrapped: paths.length - 1, already: 1, failed: [], plain: false },
  ]);
  const again = await rotateArchiveKey({ storage, to: next, from: [old.secretKey] });
  expect(again).toEqual([
    { path: dataset, rewrapped: 0, already: paths.length, failed: [], plain: false },
  ]);

  // No body byte rewritten; every header for the new key alone; the reference CLI agrees.
  expect(await Promise.all(paths.map(bodyHash))).toEqual(before);
  const nextKeyPath = join(dir, `next-${Date.now()}.sec`);
  writeFileSync(nextKeyPath, await secretKeyFile(next.secretKey));
  for (const path of paths) {
    const stored = await header(path);
    expect(await opensWith(stored, old)).toBe(false);
    const body = (await storage.readObject(`${dataset}/${path}`))!;
    expect((await referenceDecrypt([stored, body], nextKeyPath, dir)).equals(plain[path])).toBe(
      true,
    );
  }
}
