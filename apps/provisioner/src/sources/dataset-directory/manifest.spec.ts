import { ManifestParser, MAX_KEPT_PROBLEMS, parseManifest } from './manifest';

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

  it('reads paths holding U+2028, U+2029 and other separators Linux allows in names (issue 30)', () => {
    const paths = [
      'x\u2028y.txt',
      'p\u2029q',
      '\u2028lead',
      'trail\u2029',
      'nb\u00a0sp',
      'bom\ufeff',
    ];
    const parsed = parseManifest('sha256', paths.map((p) => `${SHA}  ${p}\n`).join(''));
    expect(parsed.problems).toEqual([]);
    expect([...parsed.entries.keys()]).toEqual(paths);
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

  it('reports a line that is not valid UTF-8 instead of replacing its bytes', () => {
    const text = Buffer.concat([
      Buffer.from(`${SHA}  caf`),
      Buffer.from([0xe9]),
      Buffer.from(`.txt\n${SHA}  ok.txt\n`),
    ]);
    const parser = new ManifestParser('sha256', () => true);
    parser.push(text);
    parser.end();
    expect(parser.problems).toEqual([{ line: 1, message: 'not valid UTF-8' }]);
  });

  it('gives the same result whatever the chunk boundaries, last line without a newline too', () => {
    const text = `${SHA}  a.txt\r\n\nnonsense\n${SHA}  dir/b.bin\n${SHA}  last`;
    const whole = parseManifest('sha256', text);
    const seen: string[] = [];
    const parser = new ManifestParser('sha256', (path) => seen.push(path) > 0);
    for (const byte of Buffer.from(text)) parser.push(Buffer.from([byte]));
    parser.end();
    expect(seen).toEqual([...whole.entries.keys()]);
    expect(seen).toEqual(['a.txt', 'dir/b.bin', 'last']);
    expect(parser.problems).toEqual(whole.problems);
    expect(parser.problems).toEqual([{ line: 3, message: 'not "<sha256 hex>  <path>"' }]);
  });

  // Chunks valid as a whole are sliced as text, the others decoded line by line: both ways must
  // agree, whether a chunk ends inside a character, on an invalid byte or after a byte order mark.
  it('gives the same result for every chunk size with non-ASCII paths, a BOM and a bad byte', () => {
    const text = Buffer.concat([
      Buffer.from(`\uFEFF${SHA}  données/été.txt\n${SHA}  日本/ファイル.bin\n${SHA}  caf`),
      Buffer.from([0xe9]),
      Buffer.from(`.txt\n${SHA}  ok-é.txt\n`),
    ]);
    const run = (size: number) => {
      const seen: string[] = [];
      const parser = new ManifestParser('sha256', (path) => seen.push(path) > 0);
      for (let at = 0; at < text.length; at += size) parser.push(text.subarray(at, at + size));
      parser.end();
      return { seen, problems: parser.problems };
    };
    const whole = run(text.length);
    expect(whole.seen).toEqual(['données/été.txt', '日本/ファイル.bin', 'ok-é.txt']);
    expect(whole.problems).toEqual([{ line: 3, message: 'not valid UTF-8' }]);
    for (let size = 1; size < text.length; size++) expect(run(size)).toEqual(whole);
  });

  it('skips an endless line without holding it, and keeps counting lines after it', () => {
    const parser = new ManifestParser('sha256', () => true);
    const junk = Buffer.alloc(64 * 1024, 0x61);
    for (let i = 0; i < 64; i++) parser.push(junk); // a 4 MiB line
    parser.push(Buffer.from(`\n${SHA}  after.txt\n`));
    parser.end();
    expect(parser.problems).toEqual([{ line: 1, message: 'line longer than 9000 bytes' }]);
  });

  it('keeps at most MAX_KEPT_PROBLEMS problems and counts the rest', () => {
    const parser = new ManifestParser('sha256', () => true);
    parser.push(Buffer.from('x\n'.repeat(MAX_KEPT_PROBLEMS + 5)));
    parser.push(Buffer.from(`${SHA}  ../up\n`.repeat(MAX_KEPT_PROBLEMS + 2)));
    parser.end();
    expect(parser.problems).toHaveLength(MAX_KEPT_PROBLEMS);
    expect(parser.unsafePaths).toHaveLength(MAX_KEPT_PROBLEMS);
    expect(parser.unlisted).toBe(7);
  });
});
