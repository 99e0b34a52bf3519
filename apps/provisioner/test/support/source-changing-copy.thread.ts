import { appendFileSync, renameSync, utimesSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
// The real thread with the engine's copy functions replaced: it reaches past the engine's face.
// eslint-disable-next-line no-restricted-imports
import * as hashingCopy from '../../src/import-pipeline/copying/hashing-copy';
// eslint-disable-next-line no-restricted-imports
import '../../src/import-pipeline/copying/file-copy.thread';

/**
 * A copy thread for tests (give its path, without extension, to CopyThreadPool): the real
 * thread, except that every file copy changes its source file right after the first
 * chunk was read, the way a writer still busy in the drop zone would, chosen by the file's name.
 * Once per file, so the copy goes on to notice.
 */
const changed = new Set<string>();

function afterChunk(display: string, source: string): void {
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

// Batches look the module's exports up at each call: replacing them reaches them.
const copy = hashingCopy.copyFileWithHashesSync;
const copyOverlapped = hashingCopy.copyFileWithHashesOverlapped;
Object.assign(hashingCopy, {
  copyFileWithHashesSync: (...[source, display, writer, options]: Parameters<typeof copy>) =>
    copy(source, display, writer, { ...options, afterChunk: () => afterChunk(display, source) }),
  copyFileWithHashesOverlapped: (
    ...[source, display, writer, options]: Parameters<typeof copyOverlapped>
  ) =>
    copyOverlapped(source, display, writer, {
      ...options,
      afterChunk: () => afterChunk(display, source),
    }),
});
