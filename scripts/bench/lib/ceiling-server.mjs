// The ceiling: a bare Node HTTP server answering every request with the bytes in a file, as
// fast as Node itself can. Run as its own process so it gets a core like the app does.
// Usage: node ceiling-server.mjs <body-file> <content-type> [parse-json|not-modified]; prints its
// port on stdout. With `parse-json` it reads each request body whole and parses it before
// answering (the least a JSON webhook must do); with `not-modified` it answers every request 304
// with an ETag and no body (the least a conditional GET can cost).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const [bodyFile, contentType, mode] = process.argv.slice(2);
const body = readFileSync(bodyFile);
const answer = (res) => {
  res.writeHead(200, { 'Content-Type': contentType, 'Content-Length': body.length });
  res.end(body);
};
const server = createServer((req, res) => {
  if (mode === 'not-modified') {
    req.resume();
    res.writeHead(304, { ETag: '"ceiling"' });
    return res.end();
  }
  if (mode !== 'parse-json') {
    req.resume();
    return answer(res);
  }
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    JSON.parse(Buffer.concat(chunks).toString('utf8'));
    answer(res);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${server.address().port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
