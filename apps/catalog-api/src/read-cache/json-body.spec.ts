import { createServer } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { endWithBody, jsonBody, JsonPages, JsonTextPages } from './json-body';

async function* pagesOf<T>(...pages: T[][]): AsyncGenerator<T[]> {
  for (const page of pages) yield page;
}

const text = async (value: unknown) => {
  const { body, bytes } = await jsonBody(value);
  const joined = Buffer.concat(body);
  expect(joined.length).toBe(bytes);
  return joined.toString('utf8');
};

describe('jsonBody', () => {
  it('writes what JSON.stringify writes', async () => {
    const value = { a: 1, b: [1, 'é', null], c: undefined, d: { e: true }, f: () => 1 };
    expect(await text(value)).toBe(JSON.stringify(value));
    expect(await text(['x', undefined])).toBe(JSON.stringify(['x', undefined]));
  });

  it('writes pages as the array they make, where JSON.stringify would write that array', async () => {
    const items = [{ id: 1 }, { id: 2, t: 'ü' }, { id: 3 }];
    const value = (pages: JsonPages) => ({ $schema: 's', items: pages, n: undefined, m: 2 });
    expect(await text(value(new JsonPages(pagesOf(items.slice(0, 2), [], items.slice(2)))))).toBe(
      JSON.stringify({ $schema: 's', items, m: 2 }),
    );
    expect(await text(new JsonPages(pagesOf()))).toBe('[]');
    expect(await text(new JsonPages(pagesOf([undefined, 1])))).toBe('[null,1]');
  });

  it('copies the items of JsonTextPages as the JSON text they are', async () => {
    const items = [{ id: 1, t: 'é\n' }, { id: 2 }, { id: 3 }];
    const encoded = items.map((item) => JSON.stringify(item));
    const value = {
      $schema: 's',
      items: new JsonTextPages(pagesOf(encoded.slice(0, 2), [], encoded.slice(2))),
    };
    expect(await text(value)).toBe(JSON.stringify({ $schema: 's', items }));
    expect(await text(new JsonTextPages(pagesOf()))).toBe('[]');
  });

  it('cuts a large body into chunks and tags the bytes, not the chunking', async () => {
    const items = Array.from({ length: 30_000 }, (_, id) => ({ id, text: 'x'.repeat(60) }));
    const paged = await jsonBody({
      items: new JsonPages(pagesOf(items.slice(0, 7), items.slice(7))),
    });
    const whole = await jsonBody({ items });
    expect(paged.body.length).toBeGreaterThan(1);
    expect(Buffer.concat(paged.body).toString()).toBe(JSON.stringify({ items }));
    expect(paged.etag).toBe(whole.etag);
    expect(paged.etag).toMatch(/^"[A-Za-z0-9_-]{32}"$/);
  });
});

describe('jsonBody chunks', () => {
  it('keeps a small body in an allocation of its own size', async () => {
    const { body } = await jsonBody({ a: 'é' });
    expect(body).toHaveLength(1);
    expect(body[0].buffer.byteLength).toBe(body[0].length);
  });

  it('encodes text longer than a chunk, and multi-byte text at a chunk border, whole', async () => {
    const long = 'é'.repeat(700_000);
    const items = [long, 'x'.repeat(1_048_570), '€€€', long];
    expect(Buffer.concat((await jsonBody(new JsonPages(pagesOf(items)))).body).toString()).toBe(
      JSON.stringify(items),
    );
  });
});

describe('endWithBody', () => {
  /** The raw bytes of one answer whose body is `chunks`, with or without a Content-Length. */
  async function rawAnswer(chunks: string[], length: boolean): Promise<string> {
    const server = createServer((_req, res) => {
      const body = chunks.map((c) => Buffer.from(c));
      if (length)
        res.setHeader(
          'Content-Length',
          body.reduce((n, b) => n + b.length, 0),
        );
      endWithBody(res, body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      return await new Promise<string>((resolve, reject) => {
        const socket = connect((server.address() as AddressInfo).port, '127.0.0.1', () =>
          socket.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'),
        );
        let raw = '';
        socket.on('data', (d: Buffer) => (raw += d.toString('latin1')));
        socket.on('end', () => resolve(raw));
        socket.on('error', reject);
      });
    } finally {
      server.close();
    }
  }

  it('sends several chunks in order, and chunked encoding ends after the last (Node 24)', async () => {
    const raw = await rawAnswer(['hello ', 'world'], false);
    expect(raw.slice(raw.indexOf('\r\n\r\n') + 4)).toBe('6\r\nhello \r\n5\r\nworld\r\n0\r\n\r\n');
  });

  it('sends exactly the body after a Content-Length', async () => {
    const raw = await rawAnswer(['hello ', 'world', '!'], true);
    expect(raw.slice(raw.indexOf('\r\n\r\n') + 4)).toBe('hello world!');
  });
});
