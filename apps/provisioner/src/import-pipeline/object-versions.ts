import { createHash } from 'node:crypto';

const MD5_HEX = /^[0-9a-f]{32}$/;

/**
 * The ETag preflight listed of each file of a remote dataset, by plan index: an MD5 ETag (most
 * objects) as its 16 bytes in one growing buffer, any other (a multipart upload's `<md5>-<n>`)
 * in a map. A million files take 16 MB, not the 80 MB of a million strings.
 */
export class ObjectVersions {
  private bytes = Buffer.alloc(16 * 1024);
  private readonly others = new Map<number, string>();

  set(index: number, etag: string): void {
    if (!MD5_HEX.test(etag)) {
      this.others.set(index, etag);
      return;
    }
    this.others.delete(index);
    if ((index + 1) * 16 > this.bytes.length) {
      const grown = Buffer.alloc(Math.max(this.bytes.length * 2, (index + 1) * 16));
      this.bytes.copy(grown);
      this.bytes = grown;
    }
    this.bytes.write(etag, index * 16, 16, 'hex');
  }

  get(index: number): string {
    return this.others.get(index) ?? this.bytes.toString('hex', index * 16, index * 16 + 16);
  }
}

/**
 * A number standing for an object's ETag where a local file's inode goes (what a later attempt
 * compares before keeping a staged copy): 52 bits of its SHA-256, a safe integer.
 */
export function objectFingerprint(etag: string): number {
  return parseInt(createHash('sha256').update(etag).digest('hex').slice(0, 13), 16);
}
