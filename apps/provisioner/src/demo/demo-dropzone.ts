import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { PAYLOAD_DIR, READY_MARKER, MANIFEST_FILES } from '../sources/source-system';

interface DemoDataset {
  id: string;
  title: string;
  files: Record<string, Buffer>;
  manifests: ('sha256' | 'md5')[];
  /** False: delivered without its marker yet (the deliverer is still uploading). */
  ready: boolean;
}

interface DemoSubmission {
  ref: string;
  title: string;
  status: string;
  /** A project of the demo catalog (apps/catalog-api/src/demo), so imports register there. */
  project: string;
  /** The submitting partner, by its acronym in the demo catalog (the transfer's partner). */
  partner: string;
  datasets: DemoDataset[];
}

export interface DemoDropzoneResult {
  root: string;
  /** False when the drop zone already held submissions: nothing was written. */
  created: boolean;
  submissions: number;
  datasets: number;
}

function fastq(sample: string, reads: number): Buffer {
  const lines: string[] = [];
  for (let i = 0; i < reads; i++) {
    const bases = 'ACGT'.repeat(19).slice(i % 4, (i % 4) + 72);
    lines.push(`@${sample}:${i + 1}`, bases, '+', 'I'.repeat(bases.length));
  }
  return gzipSync(`${lines.join('\n')}\n`);
}

/** Two submissions of the contract's layout: one complete (two ready datasets, one still uploading), one not yet eligible. */
function demoSubmissions(): DemoSubmission[] {
  return [
    {
      ref: 'ELX_LU_SUB-1',
      title: "Parkinson's cohort: baseline sequencing and phenotypes",
      status: 'completed',
      project: 'PD-OMICS',
      partner: 'LCSB',
      datasets: [
        {
          id: 'ELX-DS-0001',
          // The titles of DEMO_RESEARCHER's datasets in the demo catalog, whose grants they get.
          title: 'Baseline whole-exome reads',
          files: {
            'README.txt': Buffer.from('Paired-end reads of two baseline samples (demo data).\n'),
            'reads/S01_R1.fastq.gz': fastq('S01/1', 40),
            'reads/S01_R2.fastq.gz': fastq('S01/2', 40),
          },
          manifests: ['sha256'],
          ready: true,
        },
        {
          id: 'ELX-DS-0002',
          title: 'Baseline phenotypes',
          files: {
            'phenotypes.csv': Buffer.from(
              'participant,age,sex,fev1_l\nP001,34,F,3.1\nP002,51,M,2.7\nP003,45,F,2.9\n',
            ),
            'codebook.json': Buffer.from(
              `${JSON.stringify({ fev1_l: 'forced expiratory volume in 1 s, litres' }, null, 2)}\n`,
            ),
          },
          manifests: ['sha256', 'md5'],
          ready: true,
        },
        {
          id: 'ELX-DS-0003',
          title: 'Follow-up reads (upload in progress)',
          files: { 'reads/S01_R1.fastq.gz': fastq('S01/FU', 20) },
          manifests: ['sha256'],
          ready: false,
        },
      ],
    },
    {
      ref: 'ELX_LU_SUB-2',
      title: "Parkinson's cohort: 12-month metabolomics",
      status: 'data_upload',
      project: 'PD-OMICS',
      partner: 'LCSB',
      datasets: [
        {
          id: 'ELX-DS-0004',
          title: 'Serum metabolite panel',
          files: { 'metabolites.tsv': Buffer.from('participant\tglucose\nP001\t5.1\n') },
          manifests: ['sha256'],
          ready: true,
        },
      ],
    },
  ];
}

function write(path: string, content: string | Buffer): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
}

function hasSubmissions(root: string): boolean {
  try {
    return readdirSync(join(root, 'submissions')).length > 0;
  } catch {
    return false;
  }
}

function writeDataset(root: string, submissionRef: string, dataset: DemoDataset): void {
  const dir = join(root, 'datasets', dataset.id);
  write(
    join(dir, 'dataset.json'),
    `${JSON.stringify(
      {
        dataset_id: dataset.id,
        submission: submissionRef,
        title: dataset.title,
        metadata: { demo: true },
      },
      null,
      2,
    )}\n`,
  );
  for (const [path, content] of Object.entries(dataset.files))
    write(join(dir, PAYLOAD_DIR, path), content);
  for (const algorithm of dataset.manifests) {
    const lines = Object.entries(dataset.files).map(
      ([path, content]) => `${createHash(algorithm).update(content).digest('hex')}  ${path}\n`,
    );
    write(join(dir, MANIFEST_FILES[algorithm]), lines.join(''));
  }
  // Written last, as a real deliverer does.
  if (dataset.ready) write(join(dir, READY_MARKER), '');
}

/**
 * Fills an empty drop zone (no submissions yet) with a small, realistic demo; a drop zone
 * that holds submissions is left exactly as it is. Submission documents are written last, so
 * an interrupted run is completed by the next one.
 */
export function createDemoDropzone(root: string): DemoDropzoneResult {
  if (hasSubmissions(root)) return { root, created: false, submissions: 0, datasets: 0 };
  const submissions = demoSubmissions();
  for (const submission of submissions)
    for (const dataset of submission.datasets) writeDataset(root, submission.ref, dataset);
  for (const submission of submissions) {
    const document = {
      ref: submission.ref,
      title: submission.title,
      status: submission.status,
      project: submission.project,
      partner: submission.partner,
      custodians: [{ name: 'Demo Data Steward', email: 'steward@example.org' }],
      datasets: submission.datasets.map((d) => d.id),
    };
    write(
      join(root, 'submissions', submission.ref, 'submission.json'),
      `${JSON.stringify(document, null, 2)}\n`,
    );
  }
  return {
    root,
    created: true,
    submissions: submissions.length,
    datasets: submissions.reduce((n, s) => n + s.datasets.length, 0),
  };
}
