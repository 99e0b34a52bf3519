#!/usr/bin/env node
// A minimal S3 server for one benchmark only (scale-s3 with BENCH_S3_STAND_IN=1): the worker's
// memory at a million objects, which Swift here stores at ~4 ms an object (over an hour). It is
// not S3: no authentication, no durability, a data object's bytes are dropped once hashed (only
// `.provisioner/` and `.staging/` objects keep theirs), and it answers only the calls the
// provisioner's S3 backend makes, the way Swift's s3api does (conditional PUTs 501). Never for
// tests: they run against Swift (scripts/s3/swift-s3-server.sh).
//
//   node scripts/s3/s3-stand-in.mjs PORT     listens on 127.0.0.1:PORT, prints "ready" on stdout
import { createHash, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';

const port = Number(process.argv[2]);
/** bucket -> key -> { size, etag, body? } */
const buckets = new Map();
/** bucket -> sorted keys (rebuilt on the first listing after a change) */
const sortedKeys = new Map();
/** uploadId -> { bucket, key, parts: Map<number, { size, md5, body? }> } */
const uploads = new Map();

const keepsBody = (key) => key.includes('/.provisioner/') || key.includes('.staging/');
const esc = (s) =>
  s.replace(
    /[&<>"']/g,
    (c) => `&${{ '&': 'amp', '<': 'lt', '>': 'gt', '"': 'quot', "'": 'apos' }[c]};`,
  );
const xml = (res, status, body) => {
  res.writeHead(status, { 'content-type': 'application/xml' });
  res.end(`<?xml version="1.0" encoding="UTF-8"?>\n${body}`);
};
const error = (res, status, code) =>
  xml(res, status, `<Error><Code>${code}</Code><Message>${code}</Message></Error>`);

function objects(bucket) {
  return buckets.get(bucket);
}

function store(bucket, key, object) {
  objects(bucket).set(key, object);
  sortedKeys.delete(bucket);
}

function remove(bucket, key) {
  if (objects(bucket).delete(key)) sortedKeys.delete(bucket);
}

function sorted(bucket) {
  let keys = sortedKeys.get(bucket);
  if (!keys) {
    keys = [...objects(bucket).keys()].sort();
    sortedKeys.set(bucket, keys);
  }
  return keys;
}

/** The first index in `keys` whose key is above `after`. */
function firstAbove(keys, after) {
  let low = 0;
  let high = keys.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (keys[mid] <= after) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** The first index in `keys` whose key is `from` or above. */
function atOrAbove(keys, from) {
  let low = 0;
  let high = keys.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (keys[mid] < from) low = mid + 1;
    else high = mid;
  }
  return low;
}

function listObjects(res, bucket, q) {
  const prefix = q.get('prefix') ?? '';
  const delimiter = q.get('delimiter') ?? '';
  const max = Math.min(1000, Number(q.get('max-keys') ?? 1000));
  const token = q.get('continuation-token');
  const after = token ? Buffer.from(token, 'base64url').toString() : (q.get('start-after') ?? '');
  const keys = sorted(bucket);
  let i = after && after >= prefix ? firstAbove(keys, after) : atOrAbove(keys, prefix);
  const contents = [];
  const common = [];
  let last = null;
  for (; i < keys.length && contents.length + common.length < max; i++) {
    const key = keys[i];
    if (key < prefix) continue;
    if (!key.startsWith(prefix)) break;
    if (delimiter) {
      const at = key.indexOf(delimiter, prefix.length);
      if (at >= 0) {
        const cp = key.slice(0, at + delimiter.length);
        common.push(cp);
        last = cp;
        // Skip every key under this common prefix.
        i = firstAbove(keys, `${cp}\uffff`) - 1;
        continue;
      }
    }
    const o = objects(bucket).get(key);
    contents.push(
      `<Contents><Key>${esc(key)}</Key><Size>${o.size}</Size><ETag>"${o.etag}"</ETag><LastModified>2026-01-01T00:00:00.000Z</LastModified><StorageClass>STANDARD</StorageClass></Contents>`,
    );
    last = key;
  }
  const more = i < keys.length && keys[i].startsWith(prefix);
  xml(
    res,
    200,
    `<ListBucketResult><Name>${esc(bucket)}</Name><Prefix>${esc(prefix)}</Prefix><KeyCount>${contents.length + common.length}</KeyCount><MaxKeys>${max}</MaxKeys><IsTruncated>${more}</IsTruncated>${
      more && last !== null
        ? `<NextContinuationToken>${Buffer.from(last.endsWith(delimiter) && delimiter ? `${last}\uffff` : last).toString('base64url')}</NextContinuationToken>`
        : ''
    }${contents.join('')}${common.map((p) => `<CommonPrefixes><Prefix>${esc(p)}</Prefix></CommonPrefixes>`).join('')}</ListBucketResult>`,
  );
}

function listUploads(res, bucket, q) {
  const prefix = q.get('prefix') ?? '';
  const open = [...uploads.entries()].filter(
    ([, u]) => u.bucket === bucket && u.key.startsWith(prefix),
  );
  xml(
    res,
    200,
    `<ListMultipartUploadsResult><Bucket>${esc(bucket)}</Bucket><IsTruncated>false</IsTruncated>${open
      .map(([id, u]) => `<Upload><Key>${esc(u.key)}</Key><UploadId>${id}</UploadId></Upload>`)
      .join('')}</ListMultipartUploadsResult>`,
  );
}

async function handle(req, res, body) {
  const url = new URL(req.url, 'http://stand-in');
  const q = url.searchParams;
  const [, bucket, ...rest] = url.pathname.split('/');
  const key = decodeURIComponent(rest.join('/'));
  const method = req.method;
  if (!bucket) return xml(res, 200, '<ListAllMyBucketsResult><Buckets/></ListAllMyBucketsResult>');
  if (!key) {
    if (method === 'PUT') {
      if (!buckets.has(bucket)) buckets.set(bucket, new Map());
      res.writeHead(200).end();
      return;
    }
    if (!buckets.has(bucket)) return error(res, 404, 'NoSuchBucket');
    if (method === 'HEAD') return void res.writeHead(200).end();
    if (method === 'GET' && q.has('uploads')) return listUploads(res, bucket, q);
    if (method === 'GET') return listObjects(res, bucket, q);
    if (method === 'POST' && q.has('delete')) {
      const keys = [...body.toString().matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) =>
        m[1].replace(
          /&(amp|lt|gt|quot|apos);/g,
          (_, e) => ({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" })[e],
        ),
      );
      for (const k of keys) remove(bucket, k);
      return xml(
        res,
        200,
        `<DeleteResult>${keys.map((k) => `<Deleted><Key>${esc(k)}</Key></Deleted>`).join('')}</DeleteResult>`,
      );
    }
    return error(res, 501, 'NotImplemented');
  }
  if (!buckets.has(bucket)) return error(res, 404, 'NoSuchBucket');
  const md5 = () => createHash('md5').update(body).digest();
  const checkMd5 = () => {
    const sent = req.headers['content-md5'];
    if (sent && sent !== md5().toString('base64')) {
      error(res, 400, 'BadDigest');
      return false;
    }
    return true;
  };
  if (method === 'PUT' && req.headers['if-none-match']) return error(res, 501, 'NotImplemented');
  if (method === 'PUT' && q.has('partNumber')) {
    const upload = uploads.get(q.get('uploadId'));
    if (!upload) return error(res, 404, 'NoSuchUpload');
    if (!checkMd5()) return;
    const digest = md5().toString('hex');
    upload.parts.set(Number(q.get('partNumber')), {
      size: body.length,
      md5: digest,
      ...(keepsBody(key) ? { body } : {}),
    });
    res.writeHead(200, { etag: `"${digest}"` }).end();
    return;
  }
  if (method === 'PUT' && req.headers['x-amz-copy-source'])
    return error(res, 501, 'NotImplemented');
  if (method === 'PUT') {
    if (!checkMd5()) return;
    const etag = md5().toString('hex');
    store(bucket, key, { size: body.length, etag, ...(keepsBody(key) ? { body } : {}) });
    res.writeHead(200, { etag: `"${etag}"` }).end();
    return;
  }
  if (method === 'POST' && q.has('uploads')) {
    const id = randomUUID();
    uploads.set(id, { bucket, key, parts: new Map() });
    return xml(
      res,
      200,
      `<InitiateMultipartUploadResult><Bucket>${esc(bucket)}</Bucket><Key>${esc(key)}</Key><UploadId>${id}</UploadId></InitiateMultipartUploadResult>`,
    );
  }
  if (method === 'POST' && q.has('uploadId')) {
    const upload = uploads.get(q.get('uploadId'));
    if (!upload) return error(res, 404, 'NoSuchUpload');
    const numbers = [...body.toString().matchAll(/<PartNumber>(\d+)<\/PartNumber>/g)].map((m) =>
      Number(m[1]),
    );
    const parts = numbers.map((n) => upload.parts.get(n));
    if (parts.some((p) => !p)) return error(res, 400, 'InvalidPart');
    const etag = `${createHash('md5')
      .update(Buffer.concat(parts.map((p) => Buffer.from(p.md5, 'hex'))))
      .digest('hex')}-${parts.length}`;
    const size = parts.reduce((sum, p) => sum + p.size, 0);
    const kept = keepsBody(key) ? { body: Buffer.concat(parts.map((p) => p.body)) } : {};
    store(bucket, key, { size, etag, ...kept });
    uploads.delete(q.get('uploadId'));
    return xml(
      res,
      200,
      `<CompleteMultipartUploadResult><Bucket>${esc(bucket)}</Bucket><Key>${esc(key)}</Key><ETag>"${etag}"</ETag></CompleteMultipartUploadResult>`,
    );
  }
  if (method === 'DELETE' && q.has('uploadId')) {
    uploads.delete(q.get('uploadId'));
    return void res.writeHead(204).end();
  }
  if (method === 'GET' && q.has('uploadId')) {
    const upload = uploads.get(q.get('uploadId'));
    if (!upload) return error(res, 404, 'NoSuchUpload');
    const parts = [...upload.parts.entries()].sort((a, b) => a[0] - b[0]);
    return xml(
      res,
      200,
      `<ListPartsResult><Bucket>${esc(bucket)}</Bucket><Key>${esc(key)}</Key><UploadId>${q.get('uploadId')}</UploadId><IsTruncated>false</IsTruncated>${parts
        .map(
          ([n, p]) =>
            `<Part><PartNumber>${n}</PartNumber><ETag>"${p.md5}"</ETag><Size>${p.size}</Size></Part>`,
        )
        .join('')}</ListPartsResult>`,
    );
  }
  if (method === 'DELETE') {
    remove(bucket, key);
    return void res.writeHead(204).end();
  }
  const object = objects(bucket).get(key);
  if (method === 'HEAD' || method === 'GET') {
    if (!object)
      return method === 'HEAD' ? void res.writeHead(404).end() : error(res, 404, 'NoSuchKey');
    const bytes = object.body ?? Buffer.alloc(object.size);
    const headers = { etag: `"${object.etag}"`, 'last-modified': 'Thu, 01 Jan 2026 00:00:00 GMT' };
    const range = /^bytes=(\d+)-(\d+)?$/.exec(req.headers.range ?? '');
    if (method === 'GET' && range) {
      const start = Number(range[1]);
      if (start >= bytes.length) return error(res, 416, 'InvalidRange');
      const end = Math.min(bytes.length - 1, range[2] ? Number(range[2]) : bytes.length - 1);
      res.writeHead(206, {
        ...headers,
        'content-length': end - start + 1,
        'content-range': `bytes ${start}-${end}/${bytes.length}`,
      });
      return void res.end(bytes.subarray(start, end + 1));
    }
    res.writeHead(200, { ...headers, 'content-length': bytes.length });
    return void res.end(method === 'GET' ? bytes : undefined);
  }
  return error(res, 501, 'NotImplemented');
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    handle(req, res, Buffer.concat(chunks)).catch((e) => {
      console.error(e);
      if (!res.headersSent) error(res, 500, 'InternalError');
    });
  });
});
server.keepAliveTimeout = 60_000;
server.listen(port, '127.0.0.1', () => console.log('ready'));
