/** Where things live in storage (the contract's layout), as logical paths. */
export const PROVENANCE_DIR = '.provisioner';
export const PROVENANCE_FILE = 'provenance.json';
export const STORED_MANIFEST_FILE = 'manifest-sha256.txt';
export const SUBMISSION_FILE = 'submission.json';

export function collectionPath(project: string, submissionRef: string): string {
  return `projects/${project}/${submissionRef}`;
}

export function rawPath(project: string, submissionRef: string): string {
  return `${collectionPath(project, submissionRef)}/data/raw`;
}

export function datasetPath(project: string, submissionRef: string, datasetId: string): string {
  return `${rawPath(project, submissionRef)}/${datasetId}`;
}
