import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

function readVersion(): string {
  if (process.env.npm_package_version) return process.env.npm_package_version;
  try {
    return (
      (JSON.parse(readFileSync(resolve('package.json'), 'utf8')) as { version?: string }).version ??
      'unknown'
    );
  } catch {
    return 'unknown';
  }
}

/** Recorded in every provenance.json. */
export const PROVISIONER_VERSION = readVersion();
