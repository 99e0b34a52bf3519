import { parseSources } from './source-config';

const resolve = (p: string) => (p.startsWith('/') ? p : `/repo/${p}`);

describe('parseSources', () => {
  it('defaults to one dropzone source named dropzone', () => {
    expect(parseSources(undefined, '/repo/data/dropzone', resolve)).toEqual({
      sources: [
        {
          name: 'dropzone',
          type: 'dropzone',
          root: '/repo/data/dropzone',
          importable_statuses: ['completed'],
        },
      ],
      errors: [],
    });
  });

  it('parses both adapter types and resolves relative paths', () => {
    const json = JSON.stringify([
      { name: 'local', type: 'dropzone', root: 'dz' },
      {
        name: 'dss',
        type: 'dss',
        url: 'http://h:1/',
        api_key: 'k',
        landing_zone: '/lz',
        importable_statuses: ['data_approval', 'completed'],
      },
    ]);
    const { sources, errors } = parseSources(json, '', resolve);
    expect(errors).toEqual([]);
    expect(sources[0]).toMatchObject({ root: '/repo/dz' });
    expect(sources[1]).toMatchObject({
      url: 'http://h:1',
      timeout_ms: 10000,
      list_statuses: [],
      importable_statuses: ['data_approval', 'completed'],
    });
  });

  it('lists every problem at once', () => {
    const json = JSON.stringify([
      { name: 'Bad-Name', type: 'dropzone' },
      { name: 'x', type: 'ftp' },
      { name: 'y', type: 'dss', url: 'ftp://', timeout_ms: 0, extra: 1 },
      { name: 'x', type: 'dropzone', root: '/r' },
    ]);
    const { errors } = parseSources(json, '', resolve);
    expect(errors).toEqual(
      expect.arrayContaining([
        expect.stringContaining('SOURCES[0].name must match'),
        'SOURCES[0].root is required (a non-empty string)',
        'SOURCES[1].type must be "dropzone" or "dss"',
        'SOURCES[2].url must be an http(s) URL',
        'SOURCES[2].timeout_ms must be a positive integer',
        'SOURCES[2].extra is not a known setting',
        'SOURCES[2].api_key is required (a non-empty string)',
      ]),
    );
  });

  it('refuses non-JSON and non-lists', () => {
    expect(parseSources('{', '', resolve).errors).toHaveLength(1);
    expect(parseSources('{}', '', resolve).errors).toEqual(['SOURCES must be a JSON list']);
  });
});
