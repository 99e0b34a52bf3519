import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Small real HTS files, made by samtools, bgzip and tabix from text (Debian's packages). */
export interface HtsFixtures {
  bam: Buffer;
  bai: Buffer;
  vcfGz: Buffer;
  tbi: Buffer;
  /** The BAM cut after its first 60 bytes: no records, no end-of-file block. */
  truncatedBam: Buffer;
}

const SAM = [
  '@HD\tVN:1.6\tSO:coordinate',
  '@SQ\tSN:chr1\tLN:1000',
  'r1\t0\tchr1\t100\t60\t4M\t*\t0\t0\tACGT\tIIII',
  'r2\t0\tchr1\t200\t60\t4M\t*\t0\t0\tTTGA\tIIII',
  '',
].join('\n');

const VCF = [
  '##fileformat=VCFv4.2',
  '##contig=<ID=chr1,length=1000>',
  '#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO',
  'chr1\t100\t.\tA\tG\t50\tPASS\t.',
  '',
].join('\n');

export function makeHtsFixtures(): HtsFixtures {
  const dir = mkdtempSync(join(tmpdir(), 'hts-fixtures-'));
  try {
    const at = (name: string) => join(dir, name);
    writeFileSync(at('reads.sam'), SAM);
    execFileSync('samtools', ['view', '-b', '-o', at('reads.bam'), at('reads.sam')]);
    execFileSync('samtools', ['index', at('reads.bam')]);
    writeFileSync(at('calls.vcf'), VCF);
    writeFileSync(at('calls.vcf.gz'), execFileSync('bgzip', ['-c', at('calls.vcf')]));
    execFileSync('tabix', ['-p', 'vcf', at('calls.vcf.gz')]);
    const bam = readFileSync(at('reads.bam'));
    return {
      bam,
      bai: readFileSync(at('reads.bam.bai')),
      vcfGz: readFileSync(at('calls.vcf.gz')),
      tbi: readFileSync(at('calls.vcf.gz.tbi')),
      truncatedBam: bam.subarray(0, 60),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
