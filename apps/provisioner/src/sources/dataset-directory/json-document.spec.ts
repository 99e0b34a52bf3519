import { jsonDepth, MAX_JSON_DEPTH, parseJsonDocument } from './json-document';

const nested = (depth: number) => `{"a":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;

describe('parseJsonDocument', () => {
  it(`accepts a document nested ${MAX_JSON_DEPTH} deep and refuses one level more, by name`, () => {
    expect(
      parseJsonDocument(Buffer.from(nested(MAX_JSON_DEPTH)), 'dataset.json').problem,
    ).toBeNull();
    expect(parseJsonDocument(Buffer.from(nested(MAX_JSON_DEPTH + 1)), 'dataset.json')).toEqual({
      value: null,
      problem: {
        code: 'invalid_json',
        path: 'dataset.json',
        message: `dataset.json is nested deeper than ${MAX_JSON_DEPTH} levels`,
      },
    });
  });

  it('refuses 500,000 levels (1 MB) at once, without recursion', () => {
    const { problem } = parseJsonDocument(Buffer.from(nested(500_000)), 'submission.json');
    expect(problem?.message).toContain('nested deeper');
  });

  it('counts brackets in strings and escapes as text, not nesting', () => {
    expect(jsonDepth('{"a":"[[[{{{\\"[[[","b":[1,{"c":"]]]"}]}')).toBe(3);
    expect(jsonDepth('"\\\\"')).toBe(0);
  });
});
