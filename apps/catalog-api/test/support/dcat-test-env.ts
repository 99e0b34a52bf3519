import { execFile } from 'node:child_process';
import { join } from 'node:path';

/** A publisher, its contact and a health data access body: the DCAT settings the RDF tests run with. */
export const DCAT_TEST_ENV = {
  DCAT_PUBLISHER_NAME: 'Luxembourg Centre for Systems Biomedicine',
  DCAT_PUBLISHER_TYPE:
    'https://hdeu-dcat.data.health.europa.eu/resource/authority/publisher-type/public-health-institute',
  DCAT_CONTACT_EMAIL: 'data-catalog@lcsb.example',
  DCAT_HDAB_NAME: 'Luxembourg Health Data Access Body',
  DCAT_HDAB_URI: 'https://hdab.example.lu/',
  DCAT_HDAB_EMAIL: 'access@hdab.example.lu',
};

const CHECKER = join(__dirname, 'rdf-check.mjs');

/**
 * Runs rdf-check.mjs with `req` (its ops are listed at its top): an ES module, which Jest's
 * CommonJS runtime cannot load, so a child process.
 */
export function rdfCheck<T>(req: Record<string, unknown>): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      [CHECKER],
      { maxBuffer: 256 * 1024 * 1024 },
      (error, stdout, stderr) =>
        error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout) as T),
    );
    child.stdin!.end(JSON.stringify(req));
  });
}
