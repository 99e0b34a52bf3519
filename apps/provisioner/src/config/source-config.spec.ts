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

  describe('validators (any source type)', () => {
    it('parses them with their defaults, resolving a relative program against the repository', () => {
      const json = JSON.stringify([
        {
          name: 'local',
          type: 'dropzone',
          root: '/dz',
          validators: [
            { name: 'hts-files', command: ['tools/v.mjs', '--input', '{input}'] },
            {
              name: 'xml',
              command: ['podman', 'run', '--rm', 'img'],
              container: true,
              mode: 'paths',
              timeout_ms: 5000,
              memory_mb: 256,
              config: { schema: 'gdi' },
            },
          ],
        },
        { name: 'none', type: 'dropzone', root: '/dz2' },
      ]);
      const { sources, errors } = parseSources(json, '', resolve);
      expect(errors).toEqual([]);
      expect(sources[0].validators).toEqual([
        {
          name: 'hts-files',
          command: ['/repo/tools/v.mjs', '--input', '{input}'],
          container: false,
          mode: 'files',
          timeout_ms: 600_000,
          memory_mb: 2048,
        },
        {
          name: 'xml',
          command: ['podman', 'run', '--rm', 'img'],
          container: true,
          mode: 'paths',
          timeout_ms: 5000,
          memory_mb: 256,
          config: { schema: 'gdi' },
        },
      ]);
      expect(sources[0]).toMatchObject({ type: 'dropzone', root: '/dz' });
      expect(sources[1].validators).toBeUndefined();
    });

    it('lists every problem of them at once', () => {
      const json = JSON.stringify([
        {
          name: 'dss',
          type: 'dss',
          url: 'http://h',
          api_key: 'k',
          landing_zone: '/lz',
          validators: [
            { name: 'Bad Name', command: [] },
            { name: 'v', command: ['x'], timeout_ms: 0, memory_mb: 1.5, mode: 'tree', extra: 1 },
            { name: 'v', command: ['x', ''], container: 'yes', config: [] },
            'not an object',
          ],
        },
        { name: 'dz', type: 'dropzone', root: '/dz', validators: {} },
      ]);
      expect(parseSources(json, '', resolve).errors).toEqual([
        expect.stringContaining('SOURCES[0].validators[0].name must match'),
        'SOURCES[0].validators[0].command must be a non-empty list of non-empty strings',
        'SOURCES[0].validators[1].extra is not a known setting',
        'SOURCES[0].validators[1].mode must be "files" or "paths"',
        'SOURCES[0].validators[1].timeout_ms must be an integer from 1 to 86400000',
        'SOURCES[0].validators[1].memory_mb must be an integer from 1 to 1048576',
        'SOURCES[0].validators[2].command must be a non-empty list of non-empty strings',
        'SOURCES[0].validators[2].container must be true or false',
        'SOURCES[0].validators[2].config must be an object',
        'SOURCES[0].validators[3] must be an object',
        'SOURCES[0].validators: name "v" is used twice',
        'SOURCES[1].validators must be a list',
      ]);
    });
  });
});
