import { readFileSync, statSync } from 'node:fs';
import { signatureOf, RACY_WINDOW_MS } from './file-signature';

export type JsonObject = Record<string, unknown>;

/** About 1 KB each (small metadata documents): bounded like the inspection cache. */
const DEFAULT_MAX_ENTRIES = 500_000;

/**
 * Small JSON documents (submission.json, dataset.json) read through a cache keyed by the file's
 * inode, size and mtime: an unchanged document costs one stat. Values are shared between
 * callers and must not be mutated. Missing, unreadable-as-JSON or non-object documents are null.
 */
export class JsonFileCache {
  private readonly cache = new Map<string, { key: string; value: JsonObject | null }>();

  constructor(
    private readonly maxEntries = DEFAULT_MAX_ENTRIES,
    private readonly clock: () => number = Date.now,
  ) {}

  read(path: string): JsonObject | null {
    const started = this.clock();
    const stats = statSync(path, { throwIfNoEntry: false });
    if (!stats || !stats.isFile()) {
      this.cache.delete(path);
      return null;
    }
    const key = signatureOf(stats);
    const cached = this.cache.get(path);
    if (cached?.key === key) return cached.value;
    const value = readJsonObject(path);
    this.cache.delete(path);
    if (stats.mtimeMs <= started - RACY_WINDOW_MS) {
      if (this.cache.size >= this.maxEntries) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(path, { key, value });
    }
    return value;
  }
}

/** A JSON object read now, without any cache; null when missing or not a JSON object. */
export function readJsonObject(path: string): JsonObject | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR') return null;
    throw error;
  }
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as JsonObject)
      : null;
  } catch {
    return null;
  }
}
