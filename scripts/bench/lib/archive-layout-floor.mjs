// Archive mode's layout floor: what creating the two small objects it stores beside each body
// costs, alone, on one core, in a fresh process: for every file of the dataset its header
// (`.provisioner/c4gh-headers/<path>`, 124 bytes: one recipient) and its body checksum
// (`.provisioner/c4gh-body-sha256/<path>`, 65 bytes), each created as the copy threads create
// them (openSync 'wx', read-only, one writeSync, closeSync), their mirrored directories made
// first. The plain import creates each body already; these are the objects archive mode adds.
// File creation is kernel work whose cost depends on the filesystem's state (on ext4 without a
// journal, each inode allocation steps over the inodes deleted in the last seconds), so it is
// measured in the run, on the storage's filesystem, right after the rounds.
// Usage: node archive-layout-floor.mjs <empty directory to create in> <paths.json>; prints CPU ms.
import { randomFillSync } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';

const [root, pathsFile] = process.argv.slice(2);
/** The files' paths in the dataset. */
const paths = JSON.parse(readFileSync(pathsFile, 'utf8'));
const header = randomFillSync(Buffer.allocUnsafe(124));
const checksum = Buffer.from(`${'0'.repeat(64)}\n`);
const trees = ['.provisioner/c4gh-headers', '.provisioner/c4gh-body-sha256'];

function create(path, content) {
  const fd = openSync(path, 'wx', 0o444);
  try {
    writeSync(fd, content);
  } finally {
    closeSync(fd);
  }
}

const start = process.cpuUsage();
const made = new Set();
for (const path of paths) {
  const dir = dirname(path);
  if (!made.has(dir)) {
    for (const tree of trees) mkdirSync(join(root, tree, dir), { recursive: true });
    made.add(dir);
  }
  create(join(root, trees[0], path), header);
  create(join(root, trees[1], path), checksum);
}
const used = process.cpuUsage(start);
process.stdout.write(`${(used.user + used.system) / 1000}\n`);
