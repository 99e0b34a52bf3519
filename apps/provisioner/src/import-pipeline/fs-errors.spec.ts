import { mkdtempSync, openSync, symlinkSync, writeFileSync } from 'node:fs';
import { constants } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BAD_INPUT_CODES, badInputRejection, MACHINE_FAULTS } from './fs-errors';

const errnoError = (code: string, path?: string): NodeJS.ErrnoException =>
  Object.assign(new Error(`${code}: failed`), { code, syscall: 'open', path });

describe('badInputRejection', () => {
  it('rejects what the real calls answer for bad input, naming the problem and the path', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fs-errors-'));
    writeFileSync(join(dir, 'file'), 'x');
    symlinkSync('file', join(dir, 'link'));
    const failure = (call: () => unknown): unknown => {
      try {
        call();
      } catch (error) {
        return error;
      }
      throw new Error('did not fail');
    };
    const cases = [
      failure(() => openSync(join(dir, 'n'.repeat(300)), 'r')),
      failure(() => openSync(join(dir, 'link'), constants.O_RDONLY | constants.O_NOFOLLOW)),
      failure(() => openSync(join(dir, 'file/below'), 'r')),
    ];
    expect(cases.map((error) => badInputRejection(error)?.details[0].code)).toEqual([
      'enametoolong',
      'eloop',
      'enotdir',
    ]);
    expect(badInputRejection(cases[1])).toMatchObject({
      name: 'ImportRejectedError',
      code: 'bad_input',
      details: [{ path: 'link', message: expect.stringContaining('symbolic link') }],
    });
  });

  it('retries every fault of the machine, and anything it does not know', () => {
    for (const code of [...MACHINE_FAULTS, 'EUNKNOWN'])
      expect(badInputRejection(errnoError(code))).toBeNull();
    expect(badInputRejection(new Error('no code'))).toBeNull();
    expect(badInputRejection(null)).toBeNull();
  });

  it('shows a path inside the payload or the staging area, never the machine’s', () => {
    expect(
      badInputRejection(errnoError('EFBIG', '/proc/self/fd/21/a/b.bin'))!.details[0].path,
    ).toBe('a/b.bin');
    expect(
      badInputRejection(errnoError('ENAMETOOLONG', '/srv/storage/.staging/x~data~a1-w-r/deep/f'))!
        .details[0].path,
    ).toBe('deep/f');
    expect(
      BAD_INPUT_CODES.filter((code) => (MACHINE_FAULTS as readonly string[]).includes(code)),
    ).toEqual([]);
  });
});
