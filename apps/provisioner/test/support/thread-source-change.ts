import { appendFileSync, renameSync, utimesSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';

/**
 * Loaded inside a small-file copy thread (SmallFileBatch.afterChunkModule): changes a source
 * file right after its first chunk was read, the way a writer still busy in the drop zone would,
 * chosen by the file's name. Once per file, so the copy goes on to notice.
 */
const changed = new Set<string>();

export function afterChunk(display: string, source: string): void {
  if (changed.has(source)) return;
  changed.add(source);
  const name = basename(display);
  if (name.startsWith('grow-')) appendFileSync(source, 'late bytes');
  if (name.startsWith('touch-')) {
    const later = new Date(Date.now() + 5_000);
    utimesSync(source, later, later);
  }
  if (name.startsWith('replace-')) {
    writeFileSync(`${source}.new`, 'same size?');
    renameSync(`${source}.new`, source);
  }
  // Ends the thread as a crash would (process.exit in a worker thread ends that thread only).
  if (name.startsWith('crash-')) process.exit(3);
}
