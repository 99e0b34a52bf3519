// The floor of a file served by Node: a bare HTTP server (no framework, no checks) answering
// GET <mode>/<path under root>, with one `Range: bytes=a-b` honoured, in one of two ways:
//   /pipe/…  fs.createReadStream (1 MiB reads) piped into the answer, Node's textbook way;
//   /loop/…  reads into two reused 1 MiB buffers that start on a memory page, one read from the
//            file while the other is written to the socket (what the API's byte path does,
//            without the API: apps/provisioner/src/drs/byte-ranges.ts).
// Run as its own process (with the API's V8 flags and the image's allocator settings) so it gets
// a core as the API does and its buffers are placed as the API's.
// Usage: node file-floor-server.mjs <root>; prints its port on stdout.
import { open } from 'node:fs/promises';
import { createServer } from 'node:http';
import { join } from 'node:path';

const CHUNK = 1024 * 1024;
const [root] = process.argv.slice(2);

async function loop(res, handle, start, end) {
  const total = end - start + 1;
  // Mapped by V8 page by page, as the API's (docs/decisions/drs-read-buffer-alignment.md).
  const buffers = [0, 1].map(() => Buffer.from(new ArrayBuffer(CHUNK, { maxByteLength: CHUNK })));
  let writing = Promise.resolve();
  for (let sent = 0, next = 0; sent < total; next ^= 1) {
    const buffer = buffers[next];
    const { bytesRead } = await handle.read(buffer, 0, Math.min(CHUNK, total - sent), start + sent);
    await writing;
    const chunk = bytesRead === CHUNK ? buffer : buffer.subarray(0, bytesRead);
    writing = new Promise((resolve, reject) =>
      res.write(chunk, (error) => (error ? reject(error) : resolve())),
    );
    sent += bytesRead;
  }
  await writing;
  res.end();
}

const server = createServer(async (req, res) => {
  const [, mode, ...rest] = req.url.split('/');
  const handle = await open(join(root, ...rest.map(decodeURIComponent)));
  try {
    const { size } = await handle.stat();
    const range = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
    const start = range ? Number(range[1]) : 0;
    const end = range ? Math.min(Number(range[2]), size - 1) : size - 1;
    res.writeHead(range ? 206 : 200, {
      'Content-Type': 'application/octet-stream',
      'Content-Length': end - start + 1,
      ...(range ? { 'Content-Range': `bytes ${start}-${end}/${size}` } : {}),
    });
    if (mode === 'pipe') {
      await new Promise((resolve) => {
        res.once('close', resolve);
        handle.createReadStream({ start, end, highWaterMark: CHUNK, autoClose: false }).pipe(res);
      });
    } else await loop(res, handle, start, end);
  } catch {
    res.destroy();
  } finally {
    await handle.close();
  }
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${server.address().port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
