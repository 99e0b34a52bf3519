import { DUO_BASE, USE_CLASS_LABELS, duoIri, USE_CLASSES } from '../datasets/use-condition-codes';
import type { CrateDataset, CrateTrailRow } from './audit-crate.repository';

/** One JSON-LD entity of the crate's @graph (undefined members are left out when written). */
export type Entity = { '@id': string; '@type': string | string[] } & Record<string, unknown>;

export const RO_CRATE = 'https://w3id.org/ro/crate/1.2';
export const PROFILE = 'https://w3id.org/5s-crate/0.4';

/**
 * RO-Crate 1.2's context by reference, plus the two DPV terms DCAT already uses for legal
 * bases and personal data (RO-Crate's context has no term for them).
 */
export const RO_CRATE_CONTEXT = [
  `${RO_CRATE}/context`,
  {
    hasLegalBasis: 'https://w3id.org/dpv#hasLegalBasis',
  },
];

/**
 * The trail's events that say who may read the project's data: accesses granted, changed,
 * revoked and expired (REMS, CLI, expiry), visas issued, and `protected` permissions on its
 * records granted and revoked by an admin.
 */
export const PEOPLE_EVENTS = [
  'access.create',
  'access.grant',
  'access.update',
  'access.revoke',
  'access.expire',
  'visa.issue',
  'dataset.grant',
  'dataset.revoke',
  'project.grant',
  'project.revoke',
  'contract.grant',
  'contract.revoke',
];

/** What an action of these types is, in schema.org's words. */
const GRANTING = new Set(['create', 'grant', 'update', 'issue']);

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== ''
    ? value
    : typeof value === 'number'
      ? String(value)
      : undefined;

export const datasetRef = (dataset: { id: number; accession: string | null }) =>
  `#dataset-${dataset.accession ?? dataset.id}`;

const personRef = (subject: string) => `#subject-${encodeURIComponent(subject)}`;

/**
 * The safe-people entities of one trail entry: the action (who granted what to whom, when),
 * and the first time each person and agent appears, their own entity. Remembers the ids it
 * has written (people and agents of the project: bounded by them, not by the events).
 */
export function peopleEntities(datasets: CrateDataset[]): (row: CrateTrailRow) => Entity[] {
  const written = new Set<string>();
  const byKey = new Map<string, string>();
  for (const d of datasets) {
    const ref = datasetRef(d);
    byKey.set(String(d.id), ref);
    if (d.accession !== null) byKey.set(d.accession, ref);
  }
  return (row) => {
    const change = row.change;
    const out: Entity[] = [];
    const once = (entity: Entity) => {
      if (written.has(entity['@id'])) return;
      written.add(entity['@id']);
      out.push(entity);
    };
    const agentId = `#agent-${encodeURIComponent(row.actor_kind)}-${encodeURIComponent(row.actor_id ?? row.actor_name ?? '')}`;
    once({
      '@id': agentId,
      '@type': row.actor_kind === 'user' ? 'Person' : 'SoftwareApplication',
      name: row.actor_name ?? `${row.actor_kind} ${row.actor_id ?? ''}`.trim(),
      identifier: `${row.actor_kind}:${row.actor_id ?? ''}`,
    });
    let recipient: string | undefined;
    let object: string | undefined;
    if (row.object_type === 'access' || row.object_type === 'visa') {
      const subject = row.access_subject ?? text(change.subject);
      if (subject !== undefined) {
        recipient = personRef(subject);
        once({ '@id': recipient, '@type': 'Person', identifier: subject, name: subject });
      }
      const dataset = row.access_dataset ?? text(change.dataset);
      object = dataset === undefined ? undefined : byKey.get(dataset);
    } else {
      // An admin's `protected` grant: to a user (by username) or a group, on a record.
      const user = text(change.user);
      const group = text(change.group);
      if (user !== undefined) {
        recipient = `#user-${encodeURIComponent(user)}`;
        once({ '@id': recipient, '@type': 'Person', identifier: user, name: user });
      } else if (group !== undefined) {
        recipient = `#group-${encodeURIComponent(group)}`;
        once({ '@id': recipient, '@type': 'Organization', identifier: group, name: group });
      }
      object =
        row.object_type === 'dataset'
          ? byKey.get(row.object_id ?? '')
          : row.object_type === 'project'
            ? '#project'
            : `#contract-${row.object_id}`;
    }
    const what =
      row.object_type === 'visa'
        ? 'GA4GH visa issued'
        : row.object_type === 'access'
          ? `access ${row.action}`
          : `protected permission ${row.action}`;
    out.push({
      '@id': `#event-${row.event_id}`,
      '@type': GRANTING.has(row.action) ? 'AuthorizeAction' : 'Action',
      name: `${what} (trail entry ${row.seq})`,
      identifier: row.event_id,
      agent: { '@id': agentId },
      recipient: recipient === undefined ? undefined : { '@id': recipient },
      object: object === undefined ? undefined : { '@id': object },
      startTime: row.at.toISOString(),
      endTime: endOf(change),
      actionStatus: { '@id': 'http://schema.org/CompletedActionStatus' },
      description: `Trail entry ${row.seq}, sha256 ${row.hash}${
        text(change.application) === undefined
          ? ''
          : `; REMS application ${text(change.application)}`
      }`,
    });
    return out;
  };
}

/** When what was granted ends: an access's last day, or a visa's expiry. */
function endOf(change: Record<string, unknown>): string | undefined {
  const after = change.after as Record<string, unknown> | undefined;
  const last = text(after?.grant_expires_on);
  if (last !== undefined) return last;
  if (typeof change.exp === 'number') return new Date(change.exp * 1000).toISOString();
  return undefined;
}

/** The DUO terms used, as DefinedTerms of DUO, named by the catalog's labels. */
export function duoTermEntities(iris: string[]): Entity[] {
  if (iris.length === 0) return [];
  const codes = new Map(USE_CLASSES.map((code) => [duoIri(code), code]));
  const set = `${DUO_BASE}duo.owl`;
  return [
    { '@id': set, '@type': 'DefinedTermSet', name: 'Data Use Ontology (DUO)' },
    ...iris.map((iri): Entity => {
      const code = codes.get(iri);
      return {
        '@id': iri,
        '@type': 'DefinedTerm',
        name: code === undefined ? iri : USE_CLASS_LABELS[code],
        termCode: code,
        inDefinedTermSet: { '@id': set },
      };
    }),
  ];
}

export const OUTPUT_COLUMNS = [
  'seq',
  'event_id',
  'chained_at',
  'occurred_at',
  'subject',
  'dataset',
  'drs_object',
  'range_start',
  'bytes',
  'visa',
  'hash',
];

/** One served byte range as a CSV row, in OUTPUT_COLUMNS' order. */
export function outputRow(row: CrateTrailRow): (string | number | null)[] {
  const change = row.change;
  const value = (key: string) => {
    const v = change[key];
    return typeof v === 'string' || typeof v === 'number' ? v : null;
  };
  return [
    row.seq,
    row.event_id,
    row.at.toISOString(),
    value('occurred_at'),
    value('subject'),
    value('dataset'),
    row.object_id,
    value('range_start'),
    value('bytes'),
    value('visa'),
    row.hash,
  ];
}

/** RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled. */
export function csvLine(fields: (string | number | null)[]): string {
  return `${fields
    .map((field) => {
      if (field === null) return '';
      const s = String(field);
      return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
    })
    .join(',')}\r\n`;
}
