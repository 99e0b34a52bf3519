import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { CliUsageError } from './cli-command';
import { writeNewFile } from './run-cli';

describe('writeNewFile (what a command writes to a file named on the command line)', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'cli-write-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes the stream to a new file and says where and how much', async () => {
    const file = join(dir, 'out.zip');
    expect(
      await writeNewFile(file, Readable.from([Buffer.from('abc'), Buffer.from('de')])),
    ).toEqual({ file, bytes: 5 });
    expect(readFileSync(file, 'utf8')).toBe('abcde');
  });

  it('never writes over a file that is there, and stops the stream', async () => {
    const file = join(dir, 'kept.txt');
    writeFileSync(file, 'mine');
    const stream = Readable.from(['theirs']);
    await expect(writeNewFile(file, stream)).rejects.toThrow(CliUsageError);
    await expect(writeNewFile(file, Readable.from(['x']))).rejects.toThrow(
      `${file} exists: nothing overwritten`,
    );
    expect(stream.destroyed).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe('mine');
  });

  it('removes the file when the stream fails before its end', async () => {
    const file = join(dir, 'half.zip');
    async function* failing() {
      yield Buffer.from('first part');
      throw new Error('the database went away');
    }
    await expect(writeNewFile(file, Readable.from(failing()))).rejects.toThrow(
      'the database went away',
    );
    expect(existsSync(file)).toBe(false);
  });
});
