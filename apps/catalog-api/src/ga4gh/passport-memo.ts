/** A passport remembered with what it was made from. */
interface Entry {
  digest: string;
  visas: string[];
  /** Epoch seconds after which a visa of an access without end is due to be signed again. */
  renewAt: number;
  bytes: number;
}

/**
 * The last passports served, per (subject, expired), each valid only while the digest of its
 * accesses is unchanged (checked against the database on every read, so no revocation waits
 * for a notification) and until one of its visas is due for renewal. Bounded by the bytes of
 * the visas held: the least recently used go first.
 */
export class PassportMemo {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  get(key: string, digest: string, now: number): string[] | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.entries.delete(key);
    if (entry.digest !== digest || now >= entry.renewAt) {
      this.bytes -= entry.bytes;
      return undefined;
    }
    this.entries.set(key, entry);
    return entry.visas;
  }

  set(key: string, digest: string, visas: string[], renewAt: number): void {
    const old = this.entries.get(key);
    if (old !== undefined) {
      this.entries.delete(key);
      this.bytes -= old.bytes;
    }
    const bytes = visas.reduce((sum, jws) => sum + jws.length, key.length + digest.length);
    if (bytes > this.maxBytes) return;
    for (const [oldest, entry] of this.entries) {
      if (this.bytes + bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= entry.bytes;
    }
    this.entries.set(key, { digest, visas, renewAt, bytes });
    this.bytes += bytes;
  }
}
