#!/usr/bin/env node
// hts-files: a validator to the GDI validator contract (GenomicDataInfrastructure/
// validation-framework, validator-specification.md). Each BAM, CRAM, VCF or BCF file of the
// dataset must parse and have its index among the dataset's files; other files are not its
// concern. It reads <input>/input.json and the files it names, and writes <output>/result.json;
// `--describe` prints its metadata. Uses samtools and bcftools from Debian, nothing on the
// network (CRAM references are never fetched: REF_PATH points nowhere).
//
//   validate.mjs [--input DIR] [--output DIR]     (defaults /mnt/input and /mnt/output)
//   validate.mjs --describe
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const METADATA = {
  validatorId: 'hts-files',
  name: 'HTS files parse and are indexed',
  description:
    'Each BAM, CRAM, VCF or BCF file parses (samtools, bcftools) and has its index (.bai/.csi, .crai, .tbi/.csi) in the dataset.',
  version: '1.0.0',
  mode: 'file-pair',
  pathSpecification: ['*.bam', '*.cram', '*.vcf', '*.vcf.gz', '*.vcf.bgz', '*.bcf'],
};

/** A tool's complaint is cut to this many characters in a message. */
const TOOL_OUTPUT_CHARS = 600;

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 && at + 1 < args.length ? args[at + 1] : fallback;
};

const now = () => new Date().toISOString();
const message = (level, text) => ({ level, time: now(), message: text });

/** Runs a tool; null when it succeeded, else what it said (its last words, bounded). */
function run(tool, toolArgs) {
  const done = spawnSync(tool, toolArgs, {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 4 * 1024 * 1024,
    env: { ...process.env, REF_PATH: '/nonexistent/%2s/%2s/%s', REF_CACHE: '/nonexistent' },
  });
  if (done.error) return `${tool} could not run: ${done.error.message}`;
  if (done.status === 0) return null;
  const said = `${done.stderr ?? ''}`.trim().split('\n').slice(-4).join(' | ');
  const how = done.signal ? `was killed by ${done.signal}` : `exited with ${done.status}`;
  return `${tool} ${toolArgs[0]} ${how}${said ? `: ${said.slice(-TOOL_OUTPUT_CHARS)}` : ''}`;
}

/** The kind of an HTS file by its name, or null for anything else. */
function kindOf(path) {
  if (/\.bam$/i.test(path)) return 'bam';
  if (/\.cram$/i.test(path)) return 'cram';
  if (/\.(vcf\.gz|vcf\.bgz|bcf)$/i.test(path)) return 'vcf';
  if (/\.vcf$/i.test(path)) return 'plain-vcf';
  return null;
}

/** Where an index of `path` may be, as htslib looks for it (the first one the dataset holds wins). */
function indexCandidates(path, kind) {
  const stem = path.replace(/\.[^./]+$/, '');
  if (kind === 'bam') return [`${path}.bai`, `${stem}.bai`, `${path}.csi`];
  if (kind === 'cram') return [`${path}.crai`, `${stem}.crai`];
  return [`${path}.tbi`, `${path}.csi`];
}

function check(path, kind, listed) {
  const errors = [];
  if (kind === 'plain-vcf') {
    const parse = run('bcftools', ['view', '--no-version', '-Ou', '-o', '/dev/null', path]);
    if (parse) errors.push(`does not parse: ${parse}`);
    errors.push(
      'an uncompressed VCF cannot be indexed: compress it with bgzip and index it with tabix',
    );
    return errors;
  }
  const index = indexCandidates(path, kind).find((candidate) => listed.has(candidate));
  if (kind === 'vcf') {
    const parse = run('bcftools', ['view', '--no-version', '-Ou', '-o', '/dev/null', path]);
    if (parse) return [`does not parse: ${parse}`];
    if (!index) return [`has no index (${indexCandidates(path, kind).map(base).join(' or ')})`];
    const usable = run('bcftools', ['index', '--nrecords', path]);
    if (usable) return [`its index ${base(index)} cannot be used: ${usable}`];
    return [];
  }
  const quick = run('samtools', ['quickcheck', '-v', path]);
  if (quick) return [`does not parse (header or end-of-file marker): ${quick}`];
  // A BAM is read to its end (every record decoded); a CRAM's records need its reference,
  // which a validator without the network does not have: its container structure is checked.
  if (kind === 'bam') {
    const full = run('samtools', ['view', '-c', path]);
    if (full) return [`does not parse: ${full}`];
  }
  if (!index) return [`has no index (${indexCandidates(path, kind).map(base).join(' or ')})`];
  const usable = run('samtools', ['idxstats', path]);
  if (usable) return [`its index ${base(index)} cannot be used: ${usable}`];
  return [];
}

function base(path) {
  return path.slice(path.lastIndexOf('/') + 1);
}

function validate(input, output) {
  const result = { result: 'passed', files: [], messages: [] };
  try {
    const request = JSON.parse(readFileSync(join(input, 'input.json'), 'utf8'));
    const entries = Array.isArray(request.files)
      ? request.files.map((f) => f && f.path)
      : Array.isArray(request.paths)
        ? request.paths
        : null;
    if (entries === null || !entries.every((p) => typeof p === 'string'))
      throw new Error('input.json lists neither "files" (each with a "path") nor "paths"');
    const listed = new Set(entries);
    let checked = 0;
    for (const path of entries) {
      const kind = kindOf(path);
      if (kind === null) continue;
      checked += 1;
      const errors = existsSync(path)
        ? check(path, kind, listed)
        : ['is listed but cannot be read'];
      result.files.push({
        path,
        result: errors.length ? 'failed' : 'passed',
        messages: errors.map((text) => message('error', text)),
      });
      if (errors.length) result.result = 'failed';
    }
    result.messages.push(message('info', `${checked} BAM, CRAM, VCF or BCF file(s) checked`));
  } catch (error) {
    result.result = 'failed';
    result.files = [];
    result.messages.push(message('error', `validator could not run: ${error.message}`));
  }
  writeFileSync(join(output, 'result.json'), `${JSON.stringify(result, null, 2)}\n`);
}

if (args.includes('--describe')) process.stdout.write(`${JSON.stringify(METADATA, null, 2)}\n`);
else validate(option('--input', '/mnt/input'), option('--output', '/mnt/output'));
