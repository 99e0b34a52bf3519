import { decimalBytes, type EntryWriter, textEntries, writeDecimal } from '../common/byte-chunks';
import { DEPOSIT_SUFFIX, depositStoredPath, isEncryptedDeposit } from '../storage/archive-storage';
import { fileEntry } from '../storage/provenance';
import { DIGEST_BYTES, type PlannedFiles } from './planned-files';

/**
 * The two lists a published dataset holds of its files, written as bytes straight from the
 * plan's columns (a path's UTF-8 bytes, a digest's bytes as hex): no string, no object per file,
 * where building both per file cost a million-file import seconds of its flush, much of it in
 * the garbage collector.
 */

const SPACE = 0x20;
const NEWLINE = 0x0a;

/**
 * The bytes a file's listed path loses: in archive mode (`rewrapped`), an encrypted deposit is
 * listed under the name it is stored and served under, without `.c4gh`.
 */
function droppedSuffix(files: PlannedFiles, rewrapped: boolean): (i: number) => number {
  if (!rewrapped) return () => 0;
  return (i) => (isEncryptedDeposit(files.path(i)) ? DEPOSIT_SUFFIX.length : 0);
}

/** The stored manifest's lines, `<sha256 hex>  <path>\n`, in the order given (sortedByPath). */
export function storedManifestLines(files: PlannedFiles, rewrapped = false): EntryWriter {
  const hexBytes = DIGEST_BYTES.sha256 * 2;
  const dropped = droppedSuffix(files, rewrapped);
  return {
    bytes: (i) => hexBytes + 3 + files.pathBytes(i) - dropped(i),
    write: (i, target, at) => {
      let k = files.writeDigestHex('sha256', i, target, at);
      target[k++] = SPACE;
      target[k++] = SPACE;
      k = files.writePath(i, target, k) - dropped(i);
      target[k++] = NEWLINE;
      return k;
    },
  };
}

const ascii = (text: string) => Buffer.from(text, 'latin1');
const OPEN = ascii('    {\n      "path": "');
const SIZE = ascii('",\n      "size": ');
const SHA256 = ascii(',\n      "sha256": "');
const MD5 = ascii('",\n      "md5": "');
const CLOSE = ascii('"\n    }');

function put(bytes: Uint8Array, target: Buffer, at: number): number {
  target.set(bytes, at);
  return at + bytes.length;
}

/**
 * The provenance's files as fileEntry writes them; a path JSON escapes characters of (a quote, a
 * backslash, a control character) goes through fileEntry itself.
 */
export function provenanceFileEntries(
  files: PlannedFiles,
  md5: boolean,
  rewrapped = false,
): EntryWriter {
  const dropped = droppedSuffix(files, rewrapped);
  const plain = (i: number) => files.isJsonPlain(i) && dropped(i) === 0;
  const escaped = textEntries((i) =>
    fileEntry({
      path: dropped(i) === 0 ? files.path(i) : depositStoredPath(files.path(i)),
      size: files.size[i],
      sha256: files.digestHex('sha256', i)!,
      ...(md5 ? { md5: files.digestHex('md5', i) } : {}),
    }),
  );
  const fixed =
    OPEN.length +
    SIZE.length +
    SHA256.length +
    DIGEST_BYTES.sha256 * 2 +
    (md5 ? MD5.length + DIGEST_BYTES.md5 * 2 : 0) +
    CLOSE.length;
  return {
    bytes: (i) =>
      plain(i) ? fixed + files.pathBytes(i) + decimalBytes(files.size[i]) : escaped.bytes(i),
    write: (i, target, at) => {
      if (!plain(i)) return escaped.write(i, target, at);
      let k = files.writePath(i, target, put(OPEN, target, at));
      k = writeDecimal(files.size[i], target, put(SIZE, target, k));
      k = files.writeDigestHex('sha256', i, target, put(SHA256, target, k));
      if (md5) k = files.writeDigestHex('md5', i, target, put(MD5, target, k));
      return put(CLOSE, target, k);
    },
  };
}
