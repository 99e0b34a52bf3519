import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';

/**
 * The Node.js versions the project says it runs on (package.json's `engines`): the image's (the
 * Dockerfile's NODE_BASE, which CI also tests on) is one of them, and every production
 * dependency accepts the oldest release of each line, so `npm start` works on a machine that
 * still has the oldest one (docs/decisions/node-24-in-the-image.md).
 */
const ROOT = join(__dirname, '..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  engines: { node: string };
};
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { dev?: boolean; devOptional?: boolean; engines?: { node?: string } }>;
};
const oldestOfEachLine = new semver.Range(pkg.engines.node).set.map(
  (comparators) => semver.minVersion(comparators.map((c) => c.value).join(' '))!.version,
);

it("names the image's Node.js among the supported ones", () => {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  const image = /^ARG NODE_BASE=node:(\d+\.\d+\.\d+)-\S+@sha256:[0-9a-f]{64}$/m.exec(
    dockerfile,
  )?.[1];
  expect(image).toMatch(/^24\./);
  expect(semver.satisfies(image!, pkg.engines.node)).toBe(true);
  expect(oldestOfEachLine).toEqual(['20.19.0', '22.13.0', '24.11.0']);
});

it('depends in production only on packages that run on the oldest release of each line', () => {
  const refusing = Object.entries(lock.packages)
    .filter(
      ([path, entry]) => path !== '' && !entry.dev && !entry.devOptional && entry.engines?.node,
    )
    .flatMap(([path, entry]) =>
      oldestOfEachLine
        .filter((version) => !semver.satisfies(version, entry.engines!.node!))
        .map(
          (version) =>
            `${path.replace(/^.*node_modules\//, '')} (${entry.engines!.node}) refuses ${version}`,
        ),
    );
  expect(refusing).toEqual([]);
});
