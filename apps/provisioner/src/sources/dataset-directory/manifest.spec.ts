import { formatManifest, parseManifest } from './manifest';

const SHA = 'a'.repeat(64);
const MD5 = 'B'.repeat(32);

describe('parseManifest', () => {
  it('reads sha256sum lines, text and binary mode, CRLF and blank lines', () => {
    const parsed = parseManifest('sha256', `${SHA}  a.txt\r\n\n${SHA} *dir/b c.bin\n`);
    expect([...parsed.entries]).toEqual([
      ['a.txt', SHA],
      ['dir/b c.bin', SHA],
    ]);
    expect(parsed.problems).toEqual([]);
    expect(parsed.unsafePaths).toEqual([]);
  });

  it('lowercases md5 digests and unescapes md5sum backslash lines', () => {
    const parsed = parseManifest('md5', `${MD5}  x\n\\${MD5}  back\\\\slash\n`);
    expect(parsed.entries.get('x')).toBe('b'.repeat(32));
    expect(parsed.entries.has('back\\slash')).toBe(true);
  });

  it('reports malformed lines, wrong digest lengths and repeated paths with line numbers', () => {
    const parsed = parseManifest(
      'sha256',
      `nonsense\n${'a'.repeat(63)}  short\n${SHA}  same\n${SHA}  same\n`,
    );
    expect(parsed.problems.map((p) => p.line)).toEqual([1, 2, 4]);
    expect(parsed.entries.size).toBe(1);
  });

  it.each([
    ['/etc/passwd', 'absolute_path'],
    ['../x', 'dot_segment'],
    ['a/../../x', 'dot_segment'],
    ['a/./b', 'dot_segment'],
    ['a//b', 'empty_segment'],
    ['.provisioner/provenance.json', 'reserved_name'],
    ['a/.provisioner', 'reserved_name'],
    ['tab\there', 'control_character'],
  ])('flags the unsafe path %j as %s', (path, code) => {
    const parsed = parseManifest('sha256', `${SHA}  ${path}\n`);
    expect(parsed.entries.size).toBe(0);
    expect(parsed.unsafePaths).toEqual([{ code, path }]);
  });

  it('formats sorted, stable output', () => {
    expect(
      formatManifest([
        ['b', '2'],
        ['a', '1'],
      ]),
    ).toBe('1  a\n2  b\n');
  });
});
