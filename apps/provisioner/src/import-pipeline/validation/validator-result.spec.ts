import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MESSAGE_MAX_CHARS, readResult, RESULT_MAX_BYTES, resultOf } from './validator-result';

/** result.json read as untrusted input: the contract's shape (validator-specification.md) or why not. */
describe('a validator result', () => {
  it("keeps the contract's fields, dropping the messages' times, cutting long texts", () => {
    const long = 'x'.repeat(MESSAGE_MAX_CHARS + 50);
    expect(
      resultOf({
        result: 'failed',
        files: [
          {
            path: '/mnt/input/data/a.bam',
            result: 'failed',
            messages: [{ level: 'error', time: '2025-09-16T10:00:00Z', message: long }],
          },
        ],
        messages: [{ level: 'info', time: '2025-09-16T10:00:00Z', message: 'started' }],
        extra: 'ignored',
      }),
    ).toEqual({
      ok: {
        result: 'failed',
        files: [
          {
            path: '/mnt/input/data/a.bam',
            result: 'failed',
            messages: [{ level: 'error', message: `${'x'.repeat(MESSAGE_MAX_CHARS)}…` }],
          },
        ],
        messages: [{ level: 'info', message: 'started' }],
      },
    });
    expect(resultOf({ result: 'passed' })).toEqual({
      ok: { result: 'passed', files: [], messages: [] },
    });
  });

  it.each([
    [[], 'result.json is not a JSON object'],
    [{ result: 'ok' }, 'result.json: "result" is not "passed" or "failed"'],
    [{ result: 'passed', messages: {} }, 'result.json: messages is not a list'],
    [
      { result: 'passed', messages: [{ level: 'fatal', message: 'x' }] },
      'result.json: messages[0].level is not one of info, warning, error',
    ],
    [
      { result: 'passed', messages: [{ level: 'error', message: 3 }] },
      'result.json: messages[0].message is not a string',
    ],
    [{ result: 'passed', files: 'a' }, 'result.json: files is not a list'],
    [
      { result: 'passed', files: [{ result: 'passed' }] },
      'result.json: files[0].path is not a string',
    ],
    [
      { result: 'passed', files: [{ path: 'a', result: 'maybe' }] },
      'result.json: files[0].result is not "passed" or "failed"',
    ],
  ])('refuses %j: %s', (raw, problem) => {
    expect(resultOf(raw)).toEqual({ problem });
  });

  describe('read from its file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'validator-result-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('reads a regular file within the bound; refuses none, a link, an oversized one, non-JSON', async () => {
      const at = (name: string) => join(dir, name);
      writeFileSync(at('ok.json'), '{"result":"passed","files":[],"messages":[]}');
      expect(await readResult(at('ok.json'))).toEqual({
        ok: { result: 'passed', files: [], messages: [] },
      });
      expect(await readResult(at('none.json'))).toEqual({ problem: 'it wrote no result.json' });
      symlinkSync(at('ok.json'), at('link.json'));
      expect(await readResult(at('link.json'))).toEqual({ problem: 'result.json is a link' });
      writeFileSync(at('big.json'), Buffer.alloc(RESULT_MAX_BYTES + 1, 0x20));
      expect(await readResult(at('big.json'))).toEqual({
        problem: `result.json is larger than ${RESULT_MAX_BYTES} bytes`,
      });
      writeFileSync(at('bad.json'), '{"result":');
      expect(await readResult(at('bad.json'))).toEqual({ problem: 'result.json is not JSON' });
    });
  });
});
