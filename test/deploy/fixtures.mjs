import http from 'node:http';

// Data the deployment tests put into a drop zone volume, written by a one-off container of the
// app image as its user (uid 1000), as a depositor's upload would be.

/**
 * A ready dataset of `megabytes` (random files of up to 8 MiB, so an import's progress moves
 * file by file; their SHA-256 manifest; the ready marker last) added to the demo submission ELX_LU_SUB-1. `run(args, {volumes})` runs the app image.
 */
export function addDataset(run, dropzoneVolume, id, megabytes) {
  const script = `
    const fs = require('fs'), path = require('path'), crypto = require('crypto');
    const root = '/data/dropzone', id = ${JSON.stringify(id)};
    const demo = path.join(root, 'datasets', 'ELX-DS-0002');
    const dir = path.join(root, 'datasets', id);
    const meta = JSON.parse(fs.readFileSync(path.join(demo, 'dataset.json'), 'utf8'));
    fs.mkdirSync(path.join(dir, 'payload'), { recursive: true });
    const manifest = [];
    for (let left = ${megabytes}, n = 0; left > 0; left -= 8, n++) {
      const b = crypto.randomBytes(Math.min(left, 8) << 20), name = 'part-' + String(n).padStart(3, '0') + '.bin';
      fs.writeFileSync(path.join(dir, 'payload', name), b);
      manifest.push(crypto.createHash('sha256').update(b).digest('hex') + '  ' + name);
    }
    fs.writeFileSync(path.join(dir, 'manifest-sha256.txt'), manifest.join('\\n') + '\\n');
    fs.writeFileSync(path.join(dir, 'dataset.json'), JSON.stringify({ ...meta, dataset_id: id, title: 'Deploy test ' + id }));
    const subFile = path.join(root, 'submissions', meta.submission, 'submission.json');
    const sub = JSON.parse(fs.readFileSync(subFile, 'utf8'));
    sub.datasets = [...sub.datasets, id];
    fs.writeFileSync(subFile, JSON.stringify(sub));
    fs.writeFileSync(path.join(dir, '.ready'), '');
  `;
  run(['node', '-e', script], { volumes: [`${dropzoneVolume}:/data/dropzone`] });
}

/**
 * One HTTP request, by default on a connection of its own (no keep-alive): the services close
 * idle connections after 5 s, and a pooled connection closing under a POST fails it. `agent`: a
 * keep-alive agent a caller keeps busy (the rolling update's client). Resolves {status, text}.
 */
export function request(
  url,
  { method = 'GET', headers = {}, body, timeoutMs = 10_000, agent = false } = {},
) {
  return new Promise((done, fail) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      url,
      {
        method,
        agent,
        timeout: timeoutMs,
        headers: {
          ...headers,
          ...(payload
            ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }
            : {}),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => done({ status: res.statusCode, text }));
        res.on('error', fail);
      },
    );
    req.on('timeout', () =>
      req.destroy(new Error(`${method} ${url}: no answer within ${timeoutMs} ms`)),
    );
    req.on('error', fail);
    req.end(payload);
  });
}
