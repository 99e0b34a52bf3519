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

const USAGE = `
Usage: provisioner reregister [--dry-run] [--no-queue] [--json]

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
`;

const OPTIONS = new Set(['--dry-run', '--no-queue', '--json']);

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

async function main(argv: string[]): Promise<number> {
  if (answersHelp(USAGE, argv)) return 0;
  const [command, ...args] = argv;
  const unknown = args.filter((a) => !OPTIONS.has(a));
  if (command !== 'reregister' || unknown.length > 0) {
    process.stderr.write(
      `provisioner: ${command === 'reregister' ? `unknown option ${unknown[0]}` : `unknown command ${command ?? '(none)'}`}\n${USAGE.trim()}\n`,
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
  return reregister(settings, args);
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
