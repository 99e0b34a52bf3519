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
        'SOURCES[1].type must be "dropzone", "dss" or "s3"',
        'SOURCES[2].url must be an http(s) URL',
        'SOURCES[2].timeout_ms must be a positive integer',
        'SOURCES[2].extra is not a known setting',
        'SOURCES[2].api_key is required (a non-empty string)',
      ]),
    );
  });

  it('parses an s3 inbox: defaults, the prefix ending in "/", a relative credentials file', () => {
    const json = JSON.stringify([
      {
        name: 'inbox',
        type: 's3',
        bucket: 'deposits',
        prefix: 'in/box',
        credentials_file: 'c.json',
      },
      {
        name: 'inline',
        type: 's3',
        endpoint: 'https://s3.example.org/',
        bucket: 'deposits',
        region: 'eu-west-1',
        force_path_style: true,
        access_key_id: 'AK',
        secret_access_key: 'SK',
        server_side_copy: false,
      },
    ]);
    const { sources, errors } = parseSources(json, '', resolve);
    expect(errors).toEqual([]);
    expect(sources[0]).toEqual({
      name: 'inbox',
      type: 's3',
      endpoint: undefined,
      bucket: 'deposits',
      prefix: 'in/box/',
      region: 'us-east-1',
      force_path_style: false,
      access_key_id: undefined,
      secret_access_key: undefined,
      credentials_file: '/repo/c.json',
      server_side_copy: true,
      importable_statuses: ['completed'],
    });
    expect(sources[1]).toMatchObject({
      endpoint: 'https://s3.example.org',
      prefix: '',
      region: 'eu-west-1',
      force_path_style: true,
      server_side_copy: false,
    });
  });

  it('lists every problem of an s3 inbox at once', () => {
    const json = JSON.stringify([
      {
        name: 'inbox',
        type: 's3',
        endpoint: 'ftp://x',
        bucket: 'No_Bucket',
        prefix: '/abs/../x',
        region: 'EU WEST',
        force_path_style: 'yes',
        access_key_id: 'AK',
        credentials_file: 'c.json',
        root: '/r',
      },
    ]);
    expect(parseSources(json, '', resolve).errors).toEqual(
      expect.arrayContaining([
        'SOURCES[0].endpoint must be an http(s) URL',
        'SOURCES[0].bucket must be a bucket name (3-63 of a-z, 0-9, "." and "-")',
        expect.stringContaining('SOURCES[0].prefix must be "/"-separated segments'),
        'SOURCES[0].region must be a region name such as us-east-1',
        'SOURCES[0].force_path_style must be true or false',
        'SOURCES[0]: access_key_id and secret_access_key go together',
        'SOURCES[0]: give the key pair inline or in credentials_file, not both',
        'SOURCES[0].root is not a known setting',
      ]),
    );
    expect(
      parseSources(JSON.stringify([{ name: 'inbox', type: 's3' }]), '', resolve).errors,
    ).toEqual(['SOURCES[0].bucket is required (a non-empty string)']);
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
