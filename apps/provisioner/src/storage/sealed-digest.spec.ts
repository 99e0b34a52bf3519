import { createHash, randomBytes } from 'node:crypto';
import { SealedDigest } from './sealed-digest';

const REGION = 64 * 1024;
const sha256 = (...parts: Buffer[]) => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest('hex');
};

describe('SealedDigest (a body checksum hashed on the digest thread)', () => {
  it('hashes the regions handed over in order, each free to be filled again once waitHashed returns', () => {
    const memory = new SharedArrayBuffer(2 * REGION);
    const bytes = Buffer.from(memory);
    const digest = new SealedDigest(memory);
    const pieces = [randomBytes(REGION), randomBytes(REGION), randomBytes(REGION)];
    // Region 0, region 1, then region 0 again: written over only once its first bytes are hashed.
    pieces[0].copy(bytes, 0);
    const first = digest.update(0, REGION);
    pieces[1].copy(bytes, REGION);
    digest.update(REGION, REGION);
    digest.waitHashed(first);
    pieces[2].copy(bytes, 0);
    digest.update(0, REGION);
    const tail = randomBytes(1000);
    digest.waitHashed(2);
    tail.copy(bytes, REGION);
    digest.finish(REGION, tail.length);
    expect(digest.result()).toBe(sha256(...pieces, tail));
  });

  it('keeps bodies apart on the one thread, and skips what a closed body had queued', () => {
    const memories = [new SharedArrayBuffer(REGION), new SharedArrayBuffer(REGION)];
    const contents = [randomBytes(REGION), randomBytes(REGION)];
    const digests = memories.map((memory, k) => {
      contents[k].copy(Buffer.from(memory));
      return new SealedDigest(memory);
    });
    const abandoned = new SharedArrayBuffer(REGION);
    const closed = new SealedDigest(abandoned);
    closed.update(0, REGION);
    closed.close();
    digests[1].finish(0, REGION);
    digests[0].update(0, REGION / 2);
    digests[0].finish(REGION / 2, REGION / 2);
    expect(digests[1].result()).toBe(sha256(contents[1]));
    expect(digests[0].result()).toBe(sha256(contents[0]));
    // An empty body (its last region empty) has the empty digest.
    const empty = new SealedDigest(new SharedArrayBuffer(REGION));
    empty.finish(0, 0);
    expect(empty.result()).toBe(sha256());
  });
});
