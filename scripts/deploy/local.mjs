#!/usr/bin/env node
// `npm run deploy:local`: the compose stack on podman, on 127.0.0.1:3000 (catalog) and :3001
// (provisioner). Builds what is missing (base images, the project's image from the working
// tree; `--build` rebuilds it), makes random keys once (kept in .data/deploy/, never committed)
// and prints them. `-- --demo` loads the demo catalog and drop zone; `-- --down` stops and
// removes the containers (volumes kept); `-- --purge` removes the volumes and keys too.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { buildImage, ensureBases, ensureEnvFiles, imageExists, loadDemo } from './images.mjs';
import { podmanBlocker, ROOT, Stack } from './podman-stack.mjs';

const PROJECT = 'research-data';
const IMAGE = process.env.RDS_IMAGE ?? 'localhost/research-data-services:local';
const envDir = join(ROOT, '.data/deploy');
const argv = process.argv.slice(2);
const say = (message) => process.stdout.write(`[deploy] ${message}\n`);

async function main() {
  const blocker = podmanBlocker();
  if (blocker) throw new Error(blocker);
  if (argv.includes('--down') || argv.includes('--purge')) {
    const purge = argv.includes('--purge');
    new Stack({ project: PROJECT, env: { ...process.env, COMPOSE_ENV_DIR: envDir } }).down({
      purge,
    });
    if (purge) rmSync(envDir, { recursive: true, force: true });
    say(
      purge
        ? 'stopped; volumes and keys removed'
        : 'stopped (volumes kept; `-- --purge` removes them)',
    );
    return;
  }
  say('base images…');
  const bases = ensureBases();
  if (argv.includes('--build') || !imageExists(IMAGE)) {
    say(`building ${IMAGE} from the working tree…`);
    await buildImage(IMAGE, bases.NODE_BASE, { quiet: false });
  }
  const keys = ensureEnvFiles(envDir);
  const stack = new Stack({
    project: PROJECT,
    env: { ...process.env, ...bases, RDS_IMAGE: IMAGE, COMPOSE_ENV_DIR: envDir },
  });
  say('starting the stack (each service waits for its dependencies to be healthy)…');
  await stack.up({ log: say });
  const demo = argv.includes('--demo') ? loadDemo(stack, envDir) : null;
  const lines = [
    '',
    'The stack is up on this machine:',
    '  catalog-api      http://127.0.0.1:3000   (try /api/datasets)',
    '  provisioner API  http://127.0.0.1:3001   (try /submissions/dropzone)',
    '',
    `Keys (kept in ${envDir}, never committed):`,
    `  catalog global key        ${keys.GLOBAL_API_KEY}`,
    `  provisioner write key     ${keys.PROVISIONER_API_KEY}`,
    `  provisioner read key      ${keys.PROVISIONER_READ_API_KEYS}`,
  ];
  if (demo)
    lines.push(
      '',
      `Demo: ${JSON.stringify(demo.dropzone.demo)} in the drop zone; demo catalog keys:`,
      ...Object.entries(demo.catalog.keys).map(([k, v]) => `  ${k}: ${v}`),
    );
  lines.push('', `Stop: npm run deploy:local -- --down   (volumes kept; --purge removes them)`, '');
  process.stdout.write(lines.join('\n'));
}

main().catch((error) => {
  process.stderr.write(`[deploy] ${error.message}\n`);
  process.exit(1);
});
