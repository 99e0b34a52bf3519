import { createHash, randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

const MiB = 1024 * 1024;

/** A dataset directory of the drop zone, with its manifest; the files are `write`'s. */
export function writeDataset(root: string, id: string, files: Record<string, (fd: number) => string>) {
  const dir = join(root, 'datasets', id);
  mkdirSync(join(dir, 'payload'), { recursive: true });
  const lines: string[] = [];
  for (const [name, write] of Object.entries(files)) {
    const fd = openSync(join(dir, 'payload', name), 'w');
    try {
      lines.push(`${write(fd)}  ${name}`);
    } finally {
      closeSync(fd);
    }
  }
  writeFileSync(join(dir, 'manifest-sha256.txt'), `${lines.join('\n')}\n`);
  writeFileSync(
    join(dir, 'dataset.json'),
    JSON.stringify({ dataset_id: id, submission: 'SUB-DRS', title: `DRS ${id}` }),
  );
  writeFileSync(join(dir, '.ready'), '');
}

/** `bytes` of incompressible data (a random MiB repeated), and its SHA-256. */
export const bigFile =
  (bytes: number) =>
  (fd: number): string => {
    const block = randomBytes(MiB);
    const hash = createHash('sha256');
    for (let done = 0; done < bytes; done += MiB) {
      const part = block.subarray(0, Math.min(MiB, bytes - done));
      writeSync(fd, part);
      hash.update(part);
    }
    return hash.digest('hex');
  };

export const smallFile =
  (content: string) =>
  (fd: number): string => {
    writeSync(fd, content);
    return createHash('sha256').update(content).digest('hex');
  };
