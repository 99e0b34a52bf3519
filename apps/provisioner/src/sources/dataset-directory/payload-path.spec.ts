import { checkRelativePath, checkSegment, decodeName, printableName } from './payload-path';

describe('payload path rules', () => {
  it('accepts ordinary and unicode names', () => {
    expect(checkRelativePath('raw/sample 1/reads_R1.fastq.gz')).toBeNull();
    expect(checkRelativePath('Übersicht/données.csv')).toBeNull();
    expect(checkSegment('.hidden')).toBeNull();
  });

  it('rejects control characters, the reserved name and over-long names', () => {
    expect(checkSegment('new\nline')).toBe('control_character');
    expect(checkSegment('del\u007f')).toBe('control_character');
    expect(checkSegment('.provisioner')).toBe('reserved_name');
    expect(checkSegment('x'.repeat(256))).toBe('name_too_long');
    expect(checkRelativePath(`${'d/'.repeat(2100)}f`)).toBe('name_too_long');
  });

  it('detects invalid UTF-8 in raw names and prints them safely', () => {
    expect(decodeName(Buffer.from([0x66, 0xff, 0x6f]))).toBeNull();
    expect(decodeName(Buffer.from('ok', 'utf8'))).toBe('ok');
    expect(printableName('a\nb')).toBe('a\\x0ab');
  });
});
