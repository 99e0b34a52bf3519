import { renderOffloadConfig, withInternalOpened } from './support/nginx';

/** The directives of the server block by depth: the server's own, and each location's. */
function directivesOf(server: string): { server: string[]; locations: Map<string, string[]> } {
  const own: string[] = [];
  const locations = new Map<string, string[]>();
  let depth = 0;
  let location: string | undefined;
  for (const raw of server.split('\n')) {
    const line = raw.replace(/#.*$/, '').trim();
    if (line === '') continue;
    if (line.endsWith('{')) {
      depth++;
      if (line.startsWith('location ')) {
        location = line.slice('location '.length, -1).trim();
        locations.set(location, []);
      }
      continue;
    }
    if (line === '}') {
      depth--;
      if (depth === 1) location = undefined;
      continue;
    }
    if (depth === 1) own.push(line);
    else if (location !== undefined) locations.get(location)!.push(line);
  }
  return { server: own, locations };
}

describe('deploy/nginx/drs-offload.conf.template', () => {
  const rendered = renderOffloadConfig({
    LISTEN: '127.0.0.1:8080',
    UPSTREAM: '127.0.0.1:3000',
    STORAGE_ROOT: '/data',
    PREFIX: '/_drs_internal/',
  });
  const serverBlock = rendered.slice(rendered.indexOf('server {'));

  // nginx turns TCP_CORK off for a connection in any location without tcp_nopush and never back
  // on: an offloaded read, which passes through `location /` before the internal location, is
  // sent corked only when every location it passes has it (docs/decisions/drs-bench-ceiling.md).
  it('lets every location an offloaded read passes send the file corked, as nginx alone does', () => {
    const { server, locations } = directivesOf(serverBlock);
    expect(server).toContain('tcp_nopush on;');
    expect([...locations.keys()]).toEqual(['/', '/_drs_internal/']);
    for (const [, lines] of locations) {
      expect(lines.filter((line) => line.startsWith('tcp_nopush'))).toEqual([]);
    }
    expect(locations.get('/_drs_internal/')).toEqual(
      expect.arrayContaining(['internal;', 'sendfile on;']),
    );
  });

  it("gives the bench's ceiling the same directives, its internal line aside", () => {
    const opened = directivesOf(withInternalOpened(serverBlock));
    const offload = directivesOf(serverBlock);
    expect(opened.server).toEqual(offload.server);
    expect(opened.locations.get('/_drs_internal/')).toEqual(
      offload.locations.get('/_drs_internal/')!.filter((line) => line !== 'internal;'),
    );
  });
});
