import {
  Crypt4ghError,
  headerPackets,
  HeaderWriter,
  openHeader,
  secretKey,
  type SecretKey,
} from '@app/crypt4gh';
import { mapLimit } from '../common/map-limit';
import { parseProvenance } from '../storage/provenance';
import { datasetCommitObject } from '../storage/storage-layout';
import type { StorageSystem } from '../storage/storage-system';
import { publishedDatasetPaths } from '../storage-registration/reregistration';

/** Headers re-wrapped at once (each: one small read, one small write, one read back). */
const AT_ONCE = 8;

/** What became of one dataset's headers. */
export interface RotatedDataset {
  path: string;
  /** Headers re-wrapped for the new key by this run. */
  rewrapped: number;
  /** Headers the new key already opened (re-wrapped by an earlier run, or stored since). */
  already: number;
  /** Headers neither key opens, or missing, with why: left as they are. */
  failed: { path: string; reason: string }[];
  /** The dataset is not stored encrypted (nothing to do). */
  plain: boolean;
}

export interface RotationOptions {
  /** The backend itself (not archive mode's wrapper: nothing is imported). */
  storage: StorageSystem;
  /** The key the headers are to be encrypted for (the archive key now). */
  to: { secretKey: Buffer; publicKey: Buffer };
  /** The key(s) they were encrypted for before. */
  from: Buffer[];
  dryRun?: boolean;
  onDataset?: (dataset: RotatedDataset) => void;
}

/**
 * Re-wraps every stored Crypt4GH header of every published dataset from the previous archive key
 * to the new one: the same data keys (and edit list) in a header for the new key alone, written
 * over the old one in one atomic step (StorageSystem.replaceObject) and read back. No body byte
 * is read or written. A header the new key already opens is left alone, so a run that stopped
 * (killed, the store unavailable) is simply run again: it resumes where it stopped.
 */
export async function rotateArchiveKey(options: RotationOptions): Promise<RotatedDataset[]> {
  const { storage } = options;
  if (!options.dryRun && storage.replaceObject === undefined)
    throw new Error(`${storage.description} cannot replace objects`);
  const to = secretKey(options.to.secretKey);
  const from = options.from.map(secretKey);
  const results: RotatedDataset[] = [];
  for (const path of await publishedDatasetPaths(storage)) {
    const done = await rotateDataset(options, path, to, from);
    options.onDataset?.(done);
    results.push(done);
  }
  return results;
}

async function rotateDataset(
  { storage, dryRun }: RotationOptions,
  path: string,
  to: SecretKey,
  from: SecretKey[],
): Promise<RotatedDataset> {
  const result: RotatedDataset = { path, rewrapped: 0, already: 0, failed: [], plain: false };
  const provenance = parseProvenance(await storage.readObject(datasetCommitObject(path)));
  if (provenance === null) {
    result.failed.push({ path: datasetCommitObject(path), reason: 'no provenance' });
    return result;
  }
  if (provenance.encryption === undefined) return { ...result, plain: true };
  const headers = provenance.encryption.headers;
  // One writer key pair for the dataset's headers: one X25519 exchange, not one per file.
  const writer = new HeaderWriter([to.publicKey]);
  await mapLimit(provenance.files, AT_ONCE, async (file) => {
    const headerPath = `${path}/${headers}/${file.path}`;
    const outcome = await rotateHeader(storage, headerPath, to, from, writer, dryRun ?? false);
    if (outcome === 'rewrapped') result.rewrapped += 1;
    else if (outcome === 'already') result.already += 1;
    else result.failed.push({ path: headerPath, reason: outcome.failed });
  });
  return result;
}

async function rotateHeader(
  storage: StorageSystem,
  path: string,
  to: SecretKey,
  from: SecretKey[],
  writer: HeaderWriter,
  dryRun: boolean,
): Promise<'rewrapped' | 'already' | { failed: string }> {
  const stored = await storage.readObject(path);
  if (stored === null) return { failed: 'missing' };
  try {
    const packets = await headerPackets(stored);
    if (opens(packets, [to])) return 'already';
    const opened = openHeader(packets, from);
    if (dryRun) return 'rewrapped';
    await storage.replaceObject!(path, writer.build(opened));
    // Read back: the header stored now is one the new key opens.
    const written = await storage.readObject(path);
    if (written === null || !opens(await headerPackets(written), [to]))
      return { failed: 'the header read back does not open with the new key' };
    return 'rewrapped';
  } catch (error) {
    if (error instanceof Crypt4ghError) return { failed: error.message };
    throw error;
  }
}

function opens(packets: Buffer[], keys: SecretKey[]): boolean {
  try {
    openHeader(packets, keys);
    return true;
  } catch (error) {
    if (error instanceof Crypt4ghError && error.fault === 'no-key') return false;
    throw error;
  }
}
