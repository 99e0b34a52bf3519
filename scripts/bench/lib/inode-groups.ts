import { existsSync, readdirSync, statfsSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Inodes per ext4 block group of the filesystem holding `dir`: its inode count over its groups
 * of 32,768 blocks. statfs leaves the metadata's blocks out of the block count (on this machine
 * 66,053,021 of 2,048 groups' 67,108,864), so the count of groups is taken as the nearest power
 * of two, as mke2fs makes it for a disk of a power-of-two size (8,192 inodes a group here).
 */
function inodesPerGroup(dir: string): number {
  const fs = statfsSync(dir);
  const groups = Math.ceil(fs.blocks / 32_768);
  const rounded = 2 ** Math.round(Math.log2(groups));
  return Math.round(fs.files / rounded);
}

/**
 * Which ext4 block groups the regular files below `dir` have their inodes in ("group:count",
 * most files first), and those of its directories, itself included: a file's group is
 * (inode − 1) / inodes per group. ext4 creates a file in its directory's group while that group
 * has a free inode, else in one picked by a hash of the directory's inode number.
 */
export function inodeGroups(dir: string): string {
  const perGroup = inodesPerGroup(dir);
  const files = new Map<number, number>();
  const dirs = new Map<number, number>([[Math.floor((statSync(dir).ino - 1) / perGroup), 1]]);
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const counts = entry.isFile() ? files : entry.isDirectory() ? dirs : null;
    if (!counts) continue;
    const ino = statSync(join(entry.parentPath, entry.name)).ino;
    const group = Math.floor((ino - 1) / perGroup);
    counts.set(group, (counts.get(group) ?? 0) + 1);
  }
  const text = (counts: Map<number, number>) =>
    [...counts]
      .sort((a, b) => b[1] - a[1])
      .map(([group, n]) => `${group}:${n}`)
      .join(' ');
  return `files ${text(files)}; directories ${text(dirs)}`;
}

/** The first directory named `name` below `root` (at most `depth` levels down), if any. */
export function findDirectory(root: string, name: string, depth = 7): string | undefined {
  if (depth === 0 || !existsSync(root)) return undefined;
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    if (entry.name === name) return join(root, entry.name);
    const found = findDirectory(join(root, entry.name), name, depth - 1);
    if (found) return found;
  }
  return undefined;
}
