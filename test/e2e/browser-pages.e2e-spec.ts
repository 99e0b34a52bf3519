import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { createProvisionerApiApp } from '../../apps/provisioner/src/http-app';
import { freePort } from '../support/app-process';
import { startCatalogApp, type CatalogTestApp } from '../support/catalog-app';
import { provisionerTestSettings, queueEnv, TEST_WRITE_KEY } from '../support/provisioner-app';

const SCREENSHOTS = join(__dirname, '../../docs/screenshots');
/** A page's scripts run this long in Chromium's virtual time before the page is read. */
const SCRIPT_BUDGET_MS = 15_000;

/**
 * The Swagger UI and the queue dashboard opened in a real browser (Debian's `chromium`,
 * headless; installed by .ci/run): the pages' scripts run, fetch their documents and render. The
 * DOM they render is checked, and a screenshot of each is taken; UPDATE_SCREENSHOTS=1 writes
 * them to docs/screenshots/, which the README shows.
 */
describe('the API docs and the queue dashboard in headless Chromium', () => {
  const dir = mkdtempSync(join(tmpdir(), 'browser-pages-'));
  let catalog: CatalogTestApp;
  let api: NestExpressApplication;
  let proxy: Server;
  const urls: Record<string, string> = {};

  /** Chromium run once on `url`: `--dump-dom` (the DOM after the scripts) or `--screenshot`. */
  const chromium = async (url: string, output: string[]) =>
    (
      await promisify(execFile)(
        'chromium',
        [
          '--headless',
          // As root (CI's containers), Chromium runs only without its sandbox.
          '--no-sandbox',
          '--disable-gpu',
          '--disable-dev-shm-usage',
          '--hide-scrollbars',
          '--window-size=1280,900',
          `--user-data-dir=${join(dir, 'profile')}`,
          `--virtual-time-budget=${SCRIPT_BUDGET_MS}`,
          ...output,
          url,
        ],
        { encoding: 'utf8', timeout: 120_000, maxBuffer: 64 * 1024 * 1024 },
      )
    ).stdout;

  beforeAll(async () => {
    catalog = await startCatalogApp();
    const catalogPort = await freePort();
    await catalog.app.listen(catalogPort, '127.0.0.1');
    urls.catalog = `http://127.0.0.1:${catalogPort}/api/docs`;
    api = await createProvisionerApiApp(provisionerTestSettings(await queueEnv()));
    const apiPort = await freePort();
    await api.listen(apiPort, '127.0.0.1');
    // The dashboard takes the write key from a header or its login form, never from a URL: a
    // proxy adds the header, as a signed-in session would carry the cookie.
    proxy = createServer((req, res) => {
      const upstream = httpRequest(
        {
          host: '127.0.0.1',
          port: apiPort,
          path: req.url,
          method: req.method,
          headers: { ...req.headers, 'x-api-key': TEST_WRITE_KEY },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    });
    const proxyPort = await freePort();
    await new Promise<void>((resolve) => proxy.listen(proxyPort, '127.0.0.1', resolve));
    urls.dashboard = `http://127.0.0.1:${proxyPort}/admin/queues`;
  });

  afterAll(async () => {
    await new Promise((resolve) => proxy?.close(resolve));
    await api?.close();
    await catalog?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    // The Swagger UI renders the catalog's operations from its document.
    ['catalog-api-docs', 'catalog', [/Catalog API/, /opblock-tag/, /\/api\/datasets/]],
    // Bull Board renders the provisioner's queues.
    ['queue-dashboard', 'dashboard', [/imports/, /catalog-registration|registration/i]],
  ] as const)('%s renders, and is photographed', async (name, page, expected) => {
    const dom = await chromium(urls[page], ['--dump-dom']);
    for (const pattern of expected) expect(dom).toMatch(pattern);
    const shot = join(dir, `${name}.png`);
    await chromium(urls[page], [`--screenshot=${shot}`]);
    const png = readFileSync(shot);
    // A PNG of the window's size (IHDR: width and height at bytes 16 and 20).
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([1280, 900]);
    if (process.env.UPDATE_SCREENSHOTS === '1')
      copyFileSync(shot, join(SCREENSHOTS, `${name}.png`));
    // The committed screenshot is there for the README to show.
    expect(
      readFileSync(join(SCREENSHOTS, `${name}.png`))
        .subarray(1, 4)
        .toString(),
    ).toBe('PNG');
  });
});
