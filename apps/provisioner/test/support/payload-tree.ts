import { lstatSync, mkdirSync, Stats, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeSpecialFile } from './dropzone-fixture';

/**
 * A payload with what a presence check must tell apart: files at several depths, a link to a
 * file, a FIFO, and a link to a directory outside it (never entered).
 */
export function writePayloadTree(root: string): void {
  mkdirSync(join(root, 'a/b'), { recursive: true });
  writeFileSync(join(root, 'top.txt'), 'x');
  writeFileSync(join(root, 'a/b/deep.txt'), 'x');
  for (let i = 0; i < 20; i++) writeFileSync(join(root, `a/f-${i}.txt`), 'x');
  mkdirSync(join(root, 'outside/b'), { recursive: true });
  writeFileSync(join(root, 'outside/b/deep.txt'), 'x');
  symlinkSync(join(root, 'outside'), join(root, 'via-link'));
  symlinkSync('/etc/passwd', join(root, 'a/link.txt'));
  makeSpecialFile(join(root, 'a/pipe'), 'fifo');
}

/** Manifest paths asked of writePayloadTree's tree: present, missing and through a link. */
export const PAYLOAD_TREE_PATHS = [
  'top.txt',
  'a/b/deep.txt',
  'a/f-7.txt',
  'a/f-99.txt',
  'missing.txt',
  'a/missing/deep.txt',
  'top.txt/under-a-file',
  // A name counts whatever it is: preflight refuses the link and the FIFO with the full list.
  'a/link.txt',
  'a/pipe',
  // A directory on the way must be one, never a link to one.
  'via-link/b/deep.txt',
];

/** lstat, or null where nothing is (ENOENT, or ENOTDIR under a file). */
function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

/** What a lookup path by path answers (the lstat-based check the faster ones stand in for). */
export function existsByLstat(root: string, path: string): boolean {
  const parts = path.split('/');
  for (let i = 1; i < parts.length; i++)
    if (!lstatOrNull(join(root, ...parts.slice(0, i)))?.isDirectory()) return false;
  return lstatOrNull(join(root, path)) !== null;
}
