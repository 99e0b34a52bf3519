#!/usr/bin/env node
// How the worker's walk through one S3 import reads: the files a reader enters, following the
// code from the imports queue's job handler, and how often they come back to a file they left.
//
//   node scripts/dev/import-walk.mjs           the count of returns and the files most returned to
//   node scripts/dev/import-walk.mjs --list    also every file entry in order (the function
//                                              entered), returns marked
//   --max-returns N   exit 1 when the walk returns to a file already left more than N times
//                     (`npm run lint` runs it with the ceiling the code stands at: lower it when
//                     a change lowers the count, never raise it without the reason)
//
// The walk starts at the dataset job's handler (the `[ImportJobName.Dataset]` entry of
// ImportProcessor.jobHandlers() in apps/provisioner/src/import-pipeline/import.processor.ts),
// and goes depth-first, in source order: each call (or `new`, or a function passed by name as
// an argument) whose declaration has a body in a production file of apps/ or libs/ (not
// node_modules, not *.spec.ts) is followed into that body at once, and the walk goes on after
// the call once it is back. Each function or method is visited once: a second call of it is not
// followed. Functions written inside a body (arrows, callbacks) are read where they stand.
//
// Where the code branches by backend, the walk takes the S3 storage's path: a call through an
// interface or a base class (the storage, its staging areas and writers, the source, the record
// store) is followed into the class that implements the member, the S3 one where there are
// several, and for the rest what the S3 e2e tests run: the drop-zone source and the Redis record
// store (IMPLEMENTATIONS below). The staging step's copy on the copy threads is a branch only a
// backend with local files takes (StagingArea.localFiles): S3 copies on the main thread's lanes,
// so that method is not followed (NOT_ON_S3). Objects built as literals (the attempt's lease
// around the storage) are read where they are built; no call is dispatched to them.
//
// A file entry is a followed call from a function in one file into a function in another. An
// entry into file F is a return when the walk entered F before and, since its last entry into
// F, has entered another file: it had left F (for a callee, or back to a caller) and went on
// elsewhere before coming back. Calling into F again right after coming back from F is not one
// (a class built, then used), nor is coming back to a caller (no call is followed). The file
// where the walk starts counts as entered. A walk that enters each file once has no returns.
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

const list = process.argv.includes('--list');
const ceilingArg = process.argv[process.argv.indexOf('--max-returns') + 1];
const maxReturns = process.argv.includes('--max-returns') ? Number(ceilingArg) : undefined;
if (maxReturns !== undefined && !Number.isInteger(maxReturns))
  throw new Error(`--max-returns takes a whole number, not ${ceilingArg}`);
const root = resolve(join(dirname(new URL(import.meta.url).pathname), '../..'));
const START_FILE = 'apps/provisioner/src/import-pipeline/import.processor.ts';
/** The property of ImportProcessor.jobHandlers() that runs a dataset job. */
const START_HANDLER = '[ImportJobName.Dataset]';
/** Where several classes implement what a call names: the ones an S3 import runs. */
const IMPLEMENTATIONS = [
  'S3Storage',
  'S3StagingArea',
  'S3ObjectWriter',
  'DropzoneSource',
  'RedisImportRecords',
];
/** Methods of a branch an S3 import does not take. */
const NOT_ON_S3 = ['copyOnThreads'];

// The provisioner's own program (its sources and the libraries), not the whole tree's: the walk
// starts in it and never leaves it, and the type checker then binds a third fewer files.
const config = ts.getParsedCommandLineOfConfigFile(
  join(root, 'apps/provisioner/tsconfig.app.json'),
  {},
  {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    },
  },
);
const program = ts.createProgram(config.fileNames, config.options);
const checker = program.getTypeChecker();

const fileOf = (node) => relative(root, node.getSourceFile().fileName).split(sep).join('/');
const isProjectFile = (file) =>
  /^(apps|libs)\//.test(file) && !file.endsWith('.spec.ts') && !file.endsWith('.d.ts');
const production = program.getSourceFiles().filter((sf) => isProjectFile(fileOf(sf)));

function symbolOf(node) {
  const symbol = checker.getSymbolAtLocation(node);
  return symbol && symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
}

/** Classes by the interfaces and classes they implement or extend (directly or further down). */
const implementers = new Map();
function collectClasses(node) {
  if (ts.isClassDeclaration(node) && node.name) {
    for (const type of (node.heritageClauses ?? []).flatMap((h) => h.types)) {
      const base = symbolOf(type.expression);
      if (!base) continue;
      if (!implementers.has(base)) implementers.set(base, []);
      implementers.get(base).push(node);
    }
  }
  ts.forEachChild(node, collectClasses);
}
production.forEach(collectClasses);
function classesBelow(base, seen = new Set()) {
  for (const cls of implementers.get(base) ?? []) {
    if (seen.has(cls)) continue;
    seen.add(cls);
    classesBelow(checker.getSymbolAtLocation(cls.name), seen);
  }
  return [...seen];
}

const hasBody = (node) => ts.isFunctionLike(node) && node.body !== undefined;

/** The function a member declaration runs: its own body, or the S3 import's implementation. */
function implementationOf(declaration) {
  const owner = declaration.parent;
  const name = declaration.name && ts.isIdentifier(declaration.name) && declaration.name.text;
  if (name && (ts.isInterfaceDeclaration(owner) || ts.isClassDeclaration(owner)) && owner.name) {
    const below = classesBelow(checker.getSymbolAtLocation(owner.name)).filter((cls) =>
      cls.members.some((m) => m.name?.getText() === name && (hasBody(m) || m.initializer)),
    );
    const chosen =
      below.length === 1 ? below[0] : below.find((cls) => IMPLEMENTATIONS.includes(cls.name.text));
    if (chosen)
      return chosen.members.find(
        (m) => m.name?.getText() === name && (hasBody(m) || m.initializer),
      );
  }
  return declaration;
}

/** The body a call (or a function named as an argument) leads to, or undefined. */
function target(node) {
  let declaration;
  if (ts.isCallExpression(node) || ts.isNewExpression(node))
    declaration = checker.getResolvedSignature(node)?.declaration;
  if (!declaration || !ts.isFunctionLike(declaration) || ts.isFunctionTypeNode(declaration)) {
    const symbol = symbolOf(
      ts.isIdentifier(node) || ts.isPropertyAccessExpression(node) ? node : node.expression,
    );
    declaration = symbol?.valueDeclaration ?? symbol?.declarations?.[0];
  }
  if (!declaration || !isProjectFile(fileOf(declaration))) return undefined;
  declaration = implementationOf(declaration);
  if (
    (ts.isVariableDeclaration(declaration) ||
      ts.isPropertyDeclaration(declaration) ||
      ts.isPropertyAssignment(declaration)) &&
    declaration.initializer
  )
    declaration = declaration.initializer;
  if (!ts.isFunctionLike(declaration) || !hasBody(declaration)) return undefined;
  return NOT_ON_S3.includes(declaration.name?.getText()) ? undefined : declaration;
}

/** `Class.method`, `function`, the variable or property holding an arrow, or `(arrow)`. */
function nameOf(fn) {
  if (ts.isConstructorDeclaration(fn)) return `${fn.parent.name?.text}.constructor`;
  const holder = fn.name ? fn : fn.parent.name ? fn.parent : undefined;
  if (!holder) return '(arrow)';
  const owner = ts.isClassLike(holder.parent) ? `${holder.parent.name?.text}.` : '';
  return `${owner}${holder.name.getText()}`;
}

const visited = new Set();
const entries = []; // { file, name, returned }, in the order the walk makes them
const entered = new Set([START_FILE]);
let lastEntered = START_FILE;

function read(node, file) {
  if (ts.isFunctionLike(node) && hasBody(node)) {
    if (visited.has(node)) return;
    visited.add(node);
  }
  const callee =
    ts.isCallExpression(node) || ts.isNewExpression(node)
      ? target(node)
      : (ts.isIdentifier(node) || ts.isPropertyAccessExpression(node)) &&
          ts.isCallExpression(node.parent) &&
          node.parent.arguments.includes(node)
        ? target(node)
        : undefined;
  if (callee && !visited.has(callee)) {
    const to = fileOf(callee);
    if (to !== file) {
      entries.push({
        file: to,
        name: nameOf(callee),
        returned: entered.has(to) && lastEntered !== to,
      });
      entered.add(to);
      lastEntered = to;
    }
    read(callee, to);
  }
  ts.forEachChild(node, (child) => read(child, file));
}

const startFile = program.getSourceFile(join(root, START_FILE));
let start;
startFile.forEachChild(function find(node) {
  if (ts.isPropertyAssignment(node) && node.name.getText() === START_HANDLER)
    start = node.initializer;
  else ts.forEachChild(node, find);
});
if (!start) throw new Error(`no ${START_HANDLER} handler in ${START_FILE}`);
read(start, START_FILE);

const returns = entries.filter((e) => e.returned);
const byFile = new Map();
for (const { file } of returns) byFile.set(file, (byFile.get(file) ?? 0) + 1);
console.log(
  `functions visited: ${visited.size}, file entries: ${entries.length}, files: ${entered.size}`,
);
console.log(`returns to a file already left: ${returns.length}`);
for (const [file, n] of [...byFile].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])))
  console.log(`  ${String(n).padStart(3)}  ${file}`);
if (list) {
  console.log(`\nfile entries (* a return), from ${START_FILE}:`);
  for (const { file, name, returned } of entries)
    console.log(`  ${returned ? '*' : ' '} ${file}  ${name}`);
}
if (maxReturns !== undefined && returns.length > maxReturns) {
  console.error(
    `\nimport-walk --max-returns failed: ${returns.length} returns to a file already left, over the ceiling of ${maxReturns} (run with --list; docs/architecture.md, "The job path").`,
  );
  process.exit(1);
}
