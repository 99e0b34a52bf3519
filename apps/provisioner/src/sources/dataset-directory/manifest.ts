import { checkRelativePath, PathProblem } from './payload-path';

export type ChecksumAlgorithm = 'sha256' | 'md5';

export const MANIFEST_FILES: Record<ChecksumAlgorithm, string> = {
  sha256: 'manifest-sha256.txt',
  md5: 'manifest-md5.txt',
};

const HEX_LENGTH: Record<ChecksumAlgorithm, number> = { sha256: 64, md5: 32 };

/** relative path -> lowercase hex digest, in manifest order. */
export type ManifestEntries = Map<string, string>;

export interface ManifestProblem {
  line: number;
  message: string;
}

export interface ParsedManifest {
  algorithm: ChecksumAlgorithm;
  entries: ManifestEntries;
  /** Lines that are not `<hex>  <path>`, or repeat a path. */
  problems: ManifestProblem[];
  /** Paths that are syntactically fine lines but unsafe as payload paths. */
  unsafePaths: PathProblem[];
}

/**
 * Parses `<hex>  <relative path>` lines (sha256sum/md5sum output, BagIt manifests).
 * Accepts the `*` binary marker and md5sum's backslash-escaped lines; blank lines are ignored.
 */
export function parseManifest(algorithm: ChecksumAlgorithm, text: string): ParsedManifest {
  const entries: ManifestEntries = new Map();
  const problems: ManifestProblem[] = [];
  const unsafePaths: PathProblem[] = [];
  const lineRe = new RegExp(`^(\\\\?)([0-9a-fA-F]{${HEX_LENGTH[algorithm]}}) [ *](.+)$`);
  const lines = text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  lines.forEach((rawLine, index) => {
    const line = rawLine.endsWith('\r') ? rawLine.slice(0, -1) : rawLine;
    if (line.trim() === '') return;
    const match = lineRe.exec(line);
    if (!match) {
      problems.push({ line: index + 1, message: `not "<${algorithm} hex>  <path>"` });
      return;
    }
    const path = match[1] ? unescapeMd5sum(match[3]) : match[3];
    const problem = checkRelativePath(path);
    if (problem) {
      unsafePaths.push({ code: problem, path });
      return;
    }
    if (entries.has(path)) {
      problems.push({ line: index + 1, message: `path listed twice: ${path}` });
      return;
    }
    entries.set(path, match[2].toLowerCase());
  });
  return { algorithm, entries, problems, unsafePaths };
}

function unescapeMd5sum(path: string): string {
  return path.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c === 'r' ? '\r' : c));
}

/** Serialises entries in sorted path order, the way .provisioner/manifest-sha256.txt is written. */
export function formatManifest(entries: Iterable<[string, string]>): string {
  const sorted = [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return sorted.map(([path, hex]) => `${hex}  ${path}\n`).join('');
}
