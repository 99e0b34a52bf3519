import type { IncomingMessage, ServerResponse } from 'node:http';
import { redactUrl, requestId, serializeRequest, serializeResponse } from './logging.module';
import { SIGNED_TOKEN_SHAPE } from '@app/auth';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('redactUrl', () => {
  it('hides the value of API_KEY wherever it is in the query', () => {
    expect(redactUrl('/api/projects?API_KEY=s3cret')).toBe('/api/projects?API_KEY=[REDACTED]');
    expect(redactUrl('/api/projects?page=2&API_KEY=s3cret&fields=name')).toBe(
      '/api/projects?page=2&API_KEY=[REDACTED]&fields=name',
    );
  });

  it('hides it whatever the case of the name, and every occurrence', () => {
    expect(redactUrl('/x?api_key=a&Api_Key=b')).toBe('/x?api_key=[REDACTED]&Api_Key=[REDACTED]');
  });

  it('hides it when the name is percent-encoded, as Express still reads it as API_KEY', () => {
    expect(redactUrl('/x?API%5FKEY=s3cret&page=1')).toBe('/x?API%5FKEY=[REDACTED]&page=1');
    expect(redactUrl('/x?%41PI_KEY=s3cret')).toBe('/x?%41PI_KEY=[REDACTED]');
  });

  it('leaves other parameters, look-alike names and undefined alone', () => {
    expect(redactUrl('/x?page=1')).toBe('/x?page=1');
    expect(redactUrl('/x?MY_API_KEY=visible')).toBe('/x?MY_API_KEY=visible');
    expect(redactUrl(undefined)).toBeUndefined();
  });
});

describe('serializeRequest', () => {
  it('redacts the URL and a Referer carrying a key', () => {
    expect(
      serializeRequest({
        id: 'r1',
        method: 'GET',
        url: '/x?API%5FKEY=s3cret',
        headers: { referer: 'https://h/admin/queues?API_KEY=s3cret', accept: '*/*' },
      }),
    ).toEqual({
      id: 'r1',
      method: 'GET',
      url: '/x?API%5FKEY=[REDACTED]',
      headers: { referer: 'https://h/admin/queues?API_KEY=[REDACTED]', accept: '*/*' },
    });
  });

  it('takes a request that has only an id (refused by the HTTP parser) without throwing', () => {
    expect(serializeRequest({ id: 'r2' })).toEqual({
      id: 'r2',
      method: undefined,
      url: undefined,
      headers: undefined,
    });
  });
});

describe('tokens in a path (a DRS access URL)', () => {
  const paths = { routes: ['/drs-bytes/'] };

  it('hides the segment after a token path, in any case, in a path or an absolute URL', () => {
    expect(redactUrl('/drs-bytes/eyJvIjoiYSJ9.mac/reads.bam', paths)).toBe(
      '/drs-bytes/[REDACTED]/reads.bam',
    );
    expect(redactUrl('/DRS-Bytes/eyJvIjoiYSJ9.mac/reads.bam?x=1', paths)).toBe(
      '/DRS-Bytes/[REDACTED]/reads.bam?x=1',
    );
    expect(redactUrl('https://h:8443/drs-bytes/tok', paths)).toBe(
      'https://h:8443/drs-bytes/[REDACTED]',
    );
  });

  it('redacts a key in the query of such a URL too, and leaves other paths alone', () => {
    expect(redactUrl('/drs-bytes/tok/n?API_KEY=k', paths)).toBe(
      '/drs-bytes/[REDACTED]/n?API_KEY=[REDACTED]',
    );
    expect(redactUrl('/ga4gh/drs/v1/objects/drs-bytes/x', paths)).toBe(
      '/ga4gh/drs/v1/objects/drs-bytes/x',
    );
    expect(redactUrl('/drs-bytes/tok/n')).toBe('/drs-bytes/tok/n');
  });

  it('redacts the request line and the Referer of a logged request', () => {
    expect(
      serializeRequest(
        {
          id: 'r3',
          method: 'GET',
          url: '/drs-bytes/tok/a',
          headers: { referer: 'http://h/drs-bytes/tok/a' },
        },
        paths,
      ),
    ).toMatchObject({
      url: '/drs-bytes/[REDACTED]/a',
      headers: { referer: 'http://h/drs-bytes/[REDACTED]/a' },
    });
  });
});

describe('tokens by their shape, wherever they stand', () => {
  const tokens = { routes: ['/drs-bytes/'], shape: SIGNED_TOKEN_SHAPE };
  const payload = Buffer.from(JSON.stringify({ o: 'P~S~D', s: 'sub', e: 1 })).toString('base64url');
  const token = `${payload}.${'A'.repeat(42)}E`;
  const escaped = (text: string) => [...text].map((c) => `%${c.charCodeAt(0).toString(16)}`);

  it.each([
    ['//drs-bytes/', `//drs-bytes/${token}/reads.bam`],
    ['/./drs-bytes/', `/./drs-bytes/${token}/reads.bam`],
    ['/drs-bytes;x/', `/drs-bytes;x/${token}/reads.bam`],
    ['/%64rs-bytes/', `/%64rs-bytes/${token}/reads.bam`],
    ['a percent-encoded token', `/drs-bytes/${escaped(token).join('')}/reads.bam`],
    ['an encoded dot', `/x/${token.replace('.', '%2E')}`],
    ['a query parameter', `/anything?url=${token}&page=2`],
    ['characters appended', `/drs-bytes;x/${token}!!/reads.bam`],
    ['an absolute URL', `https://h:8443/%2fdrs-bytes/${token}/reads.bam`],
  ])('%s', (_name, url) => {
    const logged = redactUrl(url, tokens)!;
    expect(logged).toContain('[REDACTED]');
    expect(logged).not.toContain(token.slice(-43));
    expect(logged).not.toContain(escaped(token.slice(-43)).join(''));
  });

  it('keeps what is not a token (names, ids, short dotted words)', () => {
    for (const url of [
      '/ga4gh/drs/v1/objects/PD-OMICS~SUB-1~DS-BAM~0123456789abcdef0123',
      '/drs/reads.sorted.bam',
      `/x/${'a'.repeat(15)}.${'b'.repeat(43)}`,
    ]) {
      expect(redactUrl(url, tokens)).toBe(url);
    }
  });
});

describe('serializeResponse', () => {
  it('hides a session cookie handed out and the signature of a redirect, keeping the rest', () => {
    expect(
      serializeResponse({
        statusCode: 307,
        headers: {
          'set-cookie': ['queue_dashboard=1.abc; Path=/admin/queues; HttpOnly'],
          location: 'https://s3.example/bucket/key?X-Amz-Signature=abc&X-Amz-Credential=k',
          'x-request-id': 'r4',
        },
      }),
    ).toEqual({
      statusCode: 307,
      headers: {
        'set-cookie': '[REDACTED]',
        location: 'https://s3.example/bucket/key?[REDACTED]',
        'x-request-id': 'r4',
      },
    });
  });

  it('leaves an answer without such headers as it is, and takes one without headers', () => {
    expect(serializeResponse({ statusCode: 200, headers: { location: '/a/b' } })).toEqual({
      statusCode: 200,
      headers: { location: '/a/b' },
    });
    expect(serializeResponse({ statusCode: null })).toEqual({
      statusCode: null,
      headers: undefined,
    });
  });
});

describe('requestId', () => {
  function call(header?: string | string[], existing?: unknown) {
    const req = {
      headers: { 'x-request-id': header },
      id: existing,
    } as unknown as IncomingMessage & { id?: unknown };
    const headers: Record<string, unknown> = {};
    const res = {
      setHeader: (name: string, value: unknown) => (headers[name] = value),
    } as unknown as ServerResponse;
    const id = requestId(req, res);
    return { id, req, headers };
  }

  it('keeps a well-formed incoming id and echoes it', () => {
    const { id, req, headers } = call('lb-1:abc.DEF_9-x');
    expect(id).toBe('lb-1:abc.DEF_9-x');
    expect(req.id).toBe(id);
    expect(headers['X-Request-Id']).toBe(id);
  });

  it('replaces a missing, malformed, oversized or repeated id with a UUID', () => {
    for (const header of [undefined, '', 'has space', 'semi;colon', 'x'.repeat(129), ['a', 'b']]) {
      const { id, headers } = call(header);
      expect(id).toMatch(UUID);
      expect(headers['X-Request-Id']).toBe(id);
    }
    expect(call('x'.repeat(128)).id).toBe('x'.repeat(128));
  });

  it('returns the id already assigned to the request without setting the header again', () => {
    const { id, headers } = call('other', 'assigned-earlier');
    expect(id).toBe('assigned-earlier');
    expect(headers).toEqual({});
  });
});
