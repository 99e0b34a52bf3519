import { Queue } from 'bullmq';
import { logSafeMessage } from '@app/errors';
import { answersHelp, exitOnStopSignals } from '@app/platform';
import { loadProvisionerSettings, ProvisionerSettings } from './config/provisioner.settings';
import { IMPORTS_QUEUE } from './imports/import.queue';
import { configureQueueBackend } from './queue/queue-backend';
import { queueConnection } from './queue/queue.module';
import { storageFromSettings } from './storage/storage.module';
import { CatalogClient } from './catalog-client/catalog.client';
import {
  ReregisteredDataset,
  registrationQueue,
  reregisterPublished,
} from './storage-registration/reregistration';
import { STORAGE_REGISTRATION_QUEUE } from './storage-registration/storage-registration.queue';
import { type RotatedDataset, rotateArchiveKey } from './archive/archive-key-rotation';
import { type ArchiveKey, loadArchiveKey } from './storage/archive-key';

const USAGE = `
Usage: provisioner reregister [--dry-run] [--no-queue] [--json]
       provisioner rotate-archive-key [--dry-run] [--json]

reregister

Registers every published dataset of storage in the catalog again, from its provenance (as the
registration outbox does, straight to the catalog's POST /api/registrations with CATALOG_API_KEY).
Idempotent: what the catalog holds is left as it is. Run it after restoring the catalog from a
backup older than storage, or when registrations were lost with the queue (docs/operations.md,
"Backup and recovery"). Reads the provisioner's settings (the worker's environment).

An import record (GET /imports/<id>) whose registration names another accession, or none, gets
its registration job queued again; a worker writes the catalog's answer on it.

  --dry-run   list what would be registered; send nothing, queue nothing
  --no-queue  leave the queue alone (no import record is read or changed)
  --json      the last line is a JSON summary

One line per dataset: <outcome> <path> [<accession>] [record <record outcome>] [<reason>].
Exit 0 when every dataset is registered; 1 when any was refused, could not be sent (the catalog
unavailable: run it again) or has no provenance; 2 when it cannot run (settings, storage, queue).

rotate-archive-key
Archive mode (STORAGE_ENCRYPTION=crypt4gh): re-wraps every stored Crypt4GH header from the previous
archive key (C4GH_ARCHIVE_PREVIOUS_SECRET_KEY_FILE) to the archive key (C4GH_ARCHIVE_SECRET_KEY_FILE):
the same data keys in a header for the new key alone, each written over the old in one step and
read back. No body byte is read or written. Headers the new key already opens are left alone: a run
that stopped is run again and resumes. While it runs, the API and the worker (deployed with both
settings) open headers with either key. Remove the previous key once a run reports 0 to re-wrap
and 0 failed (docs/provisioner.md, "Rotating the archive key").

  --dry-run   count what would be re-wrapped; write nothing
  --json      the last line is a JSON summary

One line per dataset: <rewrapped> re-wrapped, <already> already, <failed> failed <path>, then each
failed header and why. Exit 0 when every header opens with the archive key; 1 when any failed;
2 when it cannot run (settings, keys, storage).
`;

const COMMANDS: Record<string, Set<string>> = {
  reregister: new Set(['--dry-run', '--no-queue', '--json']),
  'rotate-archive-key': new Set(['--dry-run', '--json']),
};

function line(d: ReregisteredDataset): string {
  return [
    d.outcome.padEnd(14),
    d.path,
    d.accession ?? '',
    d.record ? `record ${d.record}` : '',
    d.reason ?? '',
  ]
    .filter((part) => part !== '')
    .join(' ');
}

async function reregister(settings: ProvisionerSettings, args: string[]): Promise<number> {
  if (settings.catalogRegistration === null) {
    process.stderr.write(
      'reregister: catalog registration is off: set CATALOG_URL and CATALOG_API_KEY\n',
    );
    return 2;
  }
  const dryRun = args.includes('--dry-run');
  const queues: Queue[] = [];
  if (!args.includes('--no-queue')) {
    const backend = configureQueueBackend(settings, 'api');
    const options = { connection: queueConnection(backend), prefix: backend.prefix };
    queues.push(new Queue(IMPORTS_QUEUE, options), new Queue(STORAGE_REGISTRATION_QUEUE, options));
  }
  try {
    const results = await reregisterPublished({
      storage: storageFromSettings(settings),
      catalog: new CatalogClient(settings),
      platform: settings.CATALOG_STORAGE_PLATFORM,
      drsHost: settings.drs?.host,
      queue:
        queues.length === 0 || dryRun
          ? undefined
          : registrationQueue(queues[0], queues[1], settings),
      dryRun,
      onDataset: (d) => process.stdout.write(`${line(d)}\n`),
    });
    const count = (pick: (d: ReregisteredDataset) => boolean) => results.filter(pick).length;
    const summary = {
      datasets: results.length,
      added: count((d) => d.outcome === 'added'),
      unchanged: count((d) => d.outcome === 'unchanged'),
      refused: count((d) => d.outcome === 'refused'),
      unavailable: count((d) => d.outcome === 'unavailable'),
      no_provenance: count((d) => d.outcome === 'no_provenance'),
      would_register: count((d) => d.outcome === 'would_register'),
      records_queued: count((d) => d.record === 'queued'),
    };
    process.stdout.write(
      args.includes('--json')
        ? `${JSON.stringify({ reregister: summary })}\n`
        : `reregister: ${Object.entries(summary)
            .map(([k, v]) => `${v} ${k.replace('_', ' ')}`)
            .join(', ')}\n`,
    );
    return summary.refused + summary.unavailable + summary.no_provenance === 0 ? 0 : 1;
  } finally {
    await Promise.all(queues.map((q) => q.close()));
  }
}

async function rotate(settings: ProvisionerSettings, args: string[]): Promise<number> {
  const files = settings.archiveKeyFiles;
  if (files?.previous === undefined) {
    process.stderr.write(
      'rotate-archive-key: set STORAGE_ENCRYPTION=crypt4gh, C4GH_ARCHIVE_SECRET_KEY_FILE (the new key) and C4GH_ARCHIVE_PREVIOUS_SECRET_KEY_FILE (the old one)\n',
    );
    return 2;
  }
  let key: ArchiveKey;
  try {
    key = await loadArchiveKey(files.keyFile, files.passphraseFile, files.previous);
  } catch (error) {
    process.stderr.write(`rotate-archive-key: ${(error as Error).message}\n`);
    return 2;
  }
  const dryRun = args.includes('--dry-run');
  const results = await rotateArchiveKey({
    storage: storageFromSettings(settings),
    to: key,
    from: key.previousSecretKeys ?? [],
    dryRun,
    onDataset: (d) => {
      if (d.plain) return;
      process.stdout.write(
        `${d.rewrapped} ${dryRun ? 'to re-wrap' : 're-wrapped'}, ${d.already} already, ${d.failed.length} failed ${d.path}\n`,
      );
      for (const failed of d.failed)
        process.stdout.write(`  failed ${failed.path}: ${failed.reason}\n`);
    },
  });
  const encrypted = results.filter((d) => !d.plain);
  const sum = (pick: (d: RotatedDataset) => number) => encrypted.reduce((n, d) => n + pick(d), 0);
  const summary = {
    datasets: encrypted.length,
    [dryRun ? 'to_rewrap' : 'rewrapped']: sum((d) => d.rewrapped),
    already: sum((d) => d.already),
    failed: sum((d) => d.failed.length),
  };
  process.stdout.write(
    args.includes('--json')
      ? `${JSON.stringify({ 'rotate-archive-key': summary })}\n`
      : `rotate-archive-key: ${Object.entries(summary)
          .map(([k, v]) => `${v} ${k.replace('_', ' ')}`)
          .join(', ')}\n`,
  );
  return summary.failed === 0 ? 0 : 1;
}

async function main(argv: string[]): Promise<number> {
  if (answersHelp(USAGE, argv)) return 0;
  const [command, ...args] = argv;
  const options =
    command !== undefined && Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  const unknown = args.filter((a) => !options?.has(a));
  if (options === undefined || unknown.length > 0) {
    process.stderr.write(
      `provisioner: ${options !== undefined ? `unknown option ${unknown[0]}` : `unknown command ${command ?? '(none)'}`}\n${USAGE.trim()}\n`,
    );
    return 1;
  }
  let settings: ProvisionerSettings;
  try {
    settings = loadProvisionerSettings();
  } catch (error) {
    process.stderr.write(`provisioner: ${(error as Error).message}\n`);
    return 2;
  }
  return command === 'reregister' ? reregister(settings, args) : rotate(settings, args);
}

exitOnStopSignals({ message: (signal) => `provisioner: stopped by ${signal} before it finished` });

/** `npm run provisioner -- <command>`; in the image: `node dist/apps/provisioner/apps/provisioner/src/provisioner.cli.js`. */
main(process.argv.slice(2))
  // Exit explicitly: a queue connection left open must not keep a finished command running.
  .then((code) => process.exit(code))
  .catch((error: unknown) => {
    process.stderr.write(`provisioner: ${logSafeMessage(error)}\n`);
    process.exit(2);
  });
