#!/usr/bin/env node
// The source tree's import graph, floor by floor: the figures a newcomer's review of the layout
// measures (docs/architecture.md, "Where code lives").
//
//   node scripts/dev/import-graph.mjs          summary
//   node scripts/dev/import-graph.mjs --list   the summary and every offending import or file
//
// - folder cycles: strongly connected groups of an app's top-level folders (apps/<app>/src/<area>/)
//   and of the libraries, drawn from the imports of production files (not *.spec.ts);
// - upward imports: a file on a lower floor importing one on a higher floor. Floors: the
//   libraries (0); an app's foundation folders, named below (1); its feature folders (2); its
//   root files, the modules and entry points that assemble the rest (3);
// - files without a role suffix: `name.ts` rather than `name.<role>.ts` (index.ts, main.ts,
//   worker.ts and migrations are exempt).
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

const root = resolve(dirname(new URL(import.meta.url).pathname), '../..');
const list = process.argv.includes('--list');

/** Folders every feature may use and that must use no feature (floor 1). */
const FOUNDATION = {
  'catalog-api': ['common', 'config', 'database', 'catalog-version', 'read-cache', 'auth', 'health'],
  provisioner: ['common', 'config', 'queue', 'auth', 'health'],
};
const ALIASES = { '@app/errors': 'libs/errors/src', '@app/auth': 'libs/auth/src', '@app/platform': 'libs/platform/src' };

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (name.endsWith('.ts') && !name.endsWith('.spec.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

const sources = [
  ...readdirSync(join(root, 'apps')).map((app) => join(root, 'apps', app, 'src')),
  ...readdirSync(join(root, 'libs')).map((lib) => join(root, 'libs', lib, 'src')),
].filter(existsSync);
const files = sources.flatMap((dir) => walk(dir)).map((f) => relative(root, f).split(sep).join('/'));
const known = new Set(files);

function resolveImport(from, spec) {
  let base;
  if (spec.startsWith('.')) base = join(dirname(from), spec);
  else {
    const alias = Object.keys(ALIASES).find((a) => spec === a || spec.startsWith(`${a}/`));
    if (!alias) return undefined;
    base = ALIASES[alias] + spec.slice(alias.length);
  }
  base = base.split(sep).join('/').replace(/\.js$/, '');
  for (const candidate of [`${base}.ts`, `${base}/index.ts`]) if (known.has(candidate)) return candidate;
  return undefined;
}

/** `catalog-api:imports`, `catalog-api:(root)`, `lib:platform`. */
function folderOf(file) {
  const parts = file.split('/');
  if (parts[0] === 'libs') return `lib:${parts[1]}`;
  return `${parts[1]}:${parts.length === 4 ? '(root)' : parts[3]}`;
}
function floorOf(folder) {
  if (folder.startsWith('lib:')) return 0;
  const [app, area] = folder.split(':');
  if (area === '(root)') return 3;
  return (FOUNDATION[app] ?? []).includes(area) ? 1 : 2;
}

const edges = [];
for (const file of files) {
  const { importedFiles } = ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true);
  for (const { fileName } of importedFiles) {
    const target = resolveImport(file, fileName);
    if (target) edges.push([file, target]);
  }
}

// Folder graph and its strongly connected components (Tarjan).
const graph = new Map();
for (const [from, to] of edges) {
  const a = folderOf(from);
  const b = folderOf(to);
  if (a === b) continue;
  if (!graph.has(a)) graph.set(a, new Set());
  graph.get(a).add(b);
}
const index = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
const components = [];
let counter = 0;
function connect(v) {
  index.set(v, counter);
  low.set(v, counter++);
  stack.push(v);
  onStack.add(v);
  for (const w of graph.get(v) ?? []) {
    if (!index.has(w)) {
      connect(w);
      low.set(v, Math.min(low.get(v), low.get(w)));
    } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
  }
  if (low.get(v) === index.get(v)) {
    const component = [];
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1) components.push(component.sort());
  }
}
for (const v of graph.keys()) if (!index.has(v)) connect(v);

const upward = edges.filter(([from, to]) => floorOf(folderOf(from)) < floorOf(folderOf(to)));
const EXEMPT = new Set(['index.ts', 'main.ts', 'worker.ts']);
const unsuffixed = files.filter((file) => {
  const name = file.split('/').pop();
  return !EXEMPT.has(name) && !file.includes('/migrations/') && name.split('.').length === 2;
});

console.log(`production files: ${files.length}, imports between them: ${edges.length}`);
console.log(`folder cycles: ${components.length}${components.length ? ` (${components.map((c) => c.join(' <-> ')).join('; ')})` : ''}`);
console.log(`upward imports: ${upward.length}`);
console.log(`files without a role suffix: ${unsuffixed.length}`);
if (list) {
  console.log('\nupward imports:');
  for (const [from, to] of upward) console.log(`  ${from} -> ${to}`);
  console.log('\nfiles without a role suffix:');
  for (const file of unsuffixed) console.log(`  ${file}`);
}
