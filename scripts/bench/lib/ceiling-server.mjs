// The ceiling: a bare Node HTTP server answering every request with the bytes in a file, as
// fast as Node itself can. Run as its own process so it gets a core like the app does.
// Usage: node ceiling-server.mjs <body-file> <content-type>; prints its port on stdout.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const [bodyFile, contentType] = process.argv.slice(2);
const body = readFileSync(bodyFile);
const server = createServer((req, res) => {
  req.resume();
  res.writeHead(200, { 'Content-Type': contentType, 'Content-Length': body.length });
  res.end(body);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${server.address().port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
