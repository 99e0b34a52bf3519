/** A passport remembered with what it was made from. */
interface Entry {
  digest: string;
  /** The passport's JSON. */
  body: Buffer;
  /** Epoch seconds after which a visa of an access without end is due to be signed again. */
  renewAt: number;
  bytes: number;
}

/**
 * The last passports served, per (subject, expired), each valid only while the digest of its
 * accesses is unchanged (checked against the database on every read, so no revocation waits
 * for a notification) and until one of its visas is due for renewal. Kept as JSON, so a repeated
 * read is sent without serialising a megabyte again. Bounded by the bytes held: the least
 * recently used go first.
 */
export class PassportMemo {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  get(key: string, digest: string, now: number): Buffer | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.entries.delete(key);
    if (entry.digest !== digest || now >= entry.renewAt) {
      this.bytes -= entry.bytes;
      return undefined;
    }
    this.entries.set(key, entry);
    return entry.body;
  }

  set(key: string, digest: string, body: Buffer, renewAt: number): void {
    const old = this.entries.get(key);
    if (old !== undefined) {
      this.entries.delete(key);
      this.bytes -= old.bytes;
    }
    const bytes = body.length + key.length + digest.length;
    if (bytes > this.maxBytes) return;
    for (const [oldest, entry] of this.entries) {
      if (this.bytes + bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= entry.bytes;
    }
    this.entries.set(key, { digest, body, renewAt, bytes });
    this.bytes += bytes;
  }
}
