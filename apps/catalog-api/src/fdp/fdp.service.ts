import { createHash, hash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AppError, NotFoundError } from '@app/errors';
import { CatalogVersionRepository } from '../catalog-version/catalog-version.repository';
import { CatalogVersionTracker } from '../catalog-version/catalog-version-tracker';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';
import { DcatRepository, type DatasetFacts, type DcatViewer } from '../dcat/dcat.repository';
import { DcatService } from '../dcat/dcat.service';
import type { RdfNode } from '../dcat/rdf-graph';
import { rdfWriter } from '../dcat/rdf-writers';
import { matchesEtag } from '../read-cache/json-body';
import { ownedCopy, ResponseCache, stringBytes } from '../read-cache/response-cache';
import type { FdpFormat } from './fdp.dto';
import { FdpRecord, FdpRecords, FdpIris, RecordTimes } from './fdp-records';
import {
  PROFILE_KINDS,
  profileIri,
  profileNodes,
  ProfileKind,
  shaclIri,
  shaclOf,
} from './fdp-profiles';

/** What a GET of the FDP asks for. */
export type FdpTarget =
  RecordTarget | { kind: 'profile'; profile: string } | { kind: 'shacl'; profile: string };

/** A record that shows catalog data (read per data version and caller). */
export type RecordTarget =
  | { kind: 'root' }
  | { kind: 'catalog'; page: number }
  | { kind: 'dataset'; accession: string }
  | { kind: 'distribution'; accession: string; key: string };

/** Who reads: what visibility depends on, and a stable name of the caller for keys and tags. */
export interface FdpReader {
  viewer: DcatViewer;
  /** `viewerIdentity` of the caller: one caller never gets another's record or tag. */
  identity: string;
}

/** An answer written whole (records are small), with what conditional GETs compare. */
export interface FdpAnswer {
  body: readonly Buffer[];
  bytes: number;
  mediaType: string;
  etag: string;
  /** HTTP date; absent for the static profiles. */
  lastModified?: string;
  /** Link header values: profile, describedby, type, paging. */
  links: readonly string[];
}

/** An answer, the version it shows (null: static), and the records built with it. */
export interface FdpRead {
  answer: FdpAnswer;
  version: string | null;
  /** Other records of the batch it was built in (read ahead), in the same type. */
  companions: { target: FdpTarget; answer: FdpAnswer }[];
}

/** The caller holds the record already (If-None-Match matched its tag): nothing was built. */
export interface FdpNotModified {
  notModified: true;
  etag: string;
  /** The data version the tag was made at (null: a static profile). */
  version: string | null;
}

/**
 * Datasets read and mapped together when a harvester walks a catalog page's datasets (the
 * batch of /api/dcat's pages, DcatService.facts).
 */
export const READ_AHEAD = 100;
/** Catalog pages remembered for read-ahead (their dataset ids in order), the latest first. */
const LISTINGS = 16;

/** The files whose code decides a record's bytes besides the data and the settings. */
const RECORD_CODE = [
  __filename,
  require.resolve('./fdp-records'),
  require.resolve('./fdp-profiles'),
  require.resolve('../dcat/dcat.exporter'),
  require.resolve('../dcat/rdf-graph'),
  require.resolve('../dcat/rdf-writers'),
];

/**
 * Turtle's prefix block, the same at the head of every record (a fifth of a dataset record's
 * bytes): encoded once, one Buffer shared by every answer's body.
 */
const TURTLE_HEAD = ownedCopy(Buffer.from(rdfWriter('ttl', '').start()));

export class GoneError extends AppError {
  constructor(description: string) {
    super(410, 'gone', description);
  }
}

/** A catalog page's datasets as a reader saw them at a version: where read-ahead goes next. */
interface Listing {
  key: string;
  ids: number[];
  index: Map<string, number>;
}

/** One dataset's records built, keyed by what a GET asks (their answers filed by `recordKey`). */
type Built = { target: FdpTarget; record: FdpRecord }[];

/**
 * What a snapshot read for a record: the root's or a catalog page's record built, or the facts
 * of the datasets whose records are built with a dataset's (mapped after the snapshot).
 */
type Read =
  | { built: (Built[number] & { links?: string[] })[]; listing?: Omit<Listing, 'key'> }
  | {
      facts: DatasetFacts[][];
      lifetimes: Map<string, { issued: string | null; modified: string | null }>;
    };

@Injectable()
export class FdpService {
  private readonly cache: ResponseCache<FdpAnswer>;
  private listings: Listing[] = [];
  private readonly linksByKind = new Map<ProfileKind, readonly string[]>();
  /** What else than the data version and the request decides a record's bytes. */
  private readonly fingerprint: string;

  constructor(
    private readonly dcat: DcatService,
    private readonly dcatRepository: DcatRepository,
    private readonly versions: CatalogVersionRepository,
    private readonly tracker: CatalogVersionTracker,
    @Inject(CATALOG_SETTINGS) private readonly settings: CatalogSettings,
  ) {
    // Half the read cache's bytes: records are small and a crawl's are read once or twice.
    this.cache = new ResponseCache<FdpAnswer>(
      {
        maxEntries: settings.RESPONSE_CACHE_MAX_ENTRIES,
        maxBytes: Math.floor(settings.RESPONSE_CACHE_MAX_BYTES / 2),
      },
      (a) => stringBytes(a.mediaType) + a.links.reduce((n, l) => n + stringBytes(l), 0) + 64,
    );
    const hash = createHash('sha256');
    // The settings the records are made of, and the code that makes them: another build or
    // configuration never answers 304 to a tag of the previous one; replicas of one agree.
    hash.update(
      JSON.stringify([
        settings.source,
        Object.entries(settings).filter(([k]) => k.startsWith('DCAT_') || k.startsWith('FDP_')),
      ]),
    );
    for (const file of RECORD_CODE) hash.update(readFileSync(file));
    this.fingerprint = hash.digest('base64url');
  }

  /**
   * The answer to `target` in `format`, or "not modified" when `ifNoneMatch` names its tag. A
   * record's tag is derived from the catalog's data version (what the version tracker vouches
   * for, else one read of it), the caller, the record and the type: a conditional GET of an
   * unchanged record is answered without reading or building it. Answers are kept per data
   * version and caller; a dataset read from a catalog page just listed brings the next
   * READ_AHEAD datasets of the page with it, read and mapped as one batch as /api/dcat does.
   */
  async answer(
    reader: FdpReader,
    target: FdpTarget,
    format: FdpFormat,
    ifNoneMatch?: string,
  ): Promise<FdpRead | FdpNotModified> {
    if (target.kind === 'profile' || target.kind === 'shacl') {
      const answer = this.profile(target, format);
      return matchesEtag(ifNoneMatch, answer.etag)
        ? { notModified: true, etag: answer.etag, version: null }
        : { answer, version: null, companions: [] };
    }
    const seen = this.tracker.known() ?? (await this.versions.current());
    const etag = this.etag(seen, reader, target, format);
    if (matchesEtag(ifNoneMatch, etag)) return { notModified: true, etag, version: seen };
    const hit = this.cache.get(this.recordKey(seen, reader, target, format));
    if (hit !== undefined) return { answer: hit, version: seen, companions: [] };
    return this.build(reader, target, format, seen);
  }

  private recordKey(
    version: string,
    reader: Pick<FdpReader, 'identity'>,
    target: FdpTarget,
    format: FdpFormat,
  ) {
    return `${version}|${reader.identity}|${format}|${targetKey(target)}`;
  }

  private etag(version: string, reader: FdpReader, target: FdpTarget, format: FdpFormat) {
    return this.tagOf(version, reader.identity, target, format);
  }

  /**
   * The tag of a record (not a profile) for the caller `identity` at `version`: what `answer`
   * compares and sends, derived from nothing the record's data says (not even whether it
   * exists), so a conditional GET can be answered from it before anything is read.
   */
  tagOf(version: string, identity: string, target: FdpTarget, format: FdpFormat): string {
    const key = this.recordKey(version, { identity }, target, format);
    // One-shot hash: asked on every conditional GET the fast path derives.
    return `"${hash('sha256', `${this.fingerprint}\n${key}`, 'base64url').slice(0, 32)}"`;
  }

  /** The static profiles and their shapes: kept once built, tagged by their bytes. */
  private profile(target: { kind: 'profile' | 'shacl'; profile: string }, format: FdpFormat) {
    const key = `static|${format}|${targetKey(target)}`;
    const hit = this.cache.get(key);
    if (hit !== undefined) return hit;
    const base = this.settings.source;
    const kind = this.profileKind(target.profile);
    const text =
      target.kind === 'shacl'
        ? { body: shaclOf(base, kind), mediaType: 'text/turtle' }
        : this.serialise(format, profileNodes(base, kind));
    const body = ownedCopy(Buffer.from(text.body));
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`;
    const answer: FdpAnswer = {
      body: [body],
      bytes: body.length,
      mediaType: text.mediaType,
      etag,
      links: [],
    };
    this.cache.set(key, answer);
    return answer;
  }

  /**
   * Reads and writes the record in one REPEATABLE READ snapshot, files it (and the records
   * built with it) under the snapshot's version, and tags it with that version.
   */
  private async build(
    reader: FdpReader,
    target: RecordTarget,
    format: FdpFormat,
    seen: string,
  ): Promise<FdpRead> {
    const exporter = this.dcat.exporter((b) => new FdpIris(b));
    const iris = new FdpIris(this.settings.source);
    const records = new FdpRecords(
      exporter,
      iris,
      this.settings.source,
      this.settings.FDP_VP_DISCOVERABLE,
    );
    const { version, read } = await this.dcat.inSnapshot(async (m) => {
      const version = await this.versions.current(m);
      const listed = version === seen ? seen : null;
      return { version, read: await this.read(m, reader, target, listed, records, iris) };
    });
    if ('listing' in read && read.listing !== undefined)
      this.remember({ ...read.listing, key: `${version}|${reader.identity}` });
    const wanted = targetKey(target);
    let answer: FdpAnswer | undefined;
    const companions: FdpRead['companions'] = [];
    // Mapped once the snapshot has ended (its connection back in the pool) and written dataset
    // by dataset: a dataset's nodes are garbage once its records are written, collected young,
    // instead of the whole batch's nodes living through the writing of every record.
    for (const one of this.built(read, records, iris)) {
      // A harvester reads a page's datasets before their distributions (breadth first): when it
      // asks for a distribution, the datasets of the batch were answered already; writing their
      // records again would be a third of the batch's serialisation for nothing.
      if (target.kind === 'distribution' && one.target.kind === 'dataset') continue;
      const etag = this.etag(version, reader, one.target, format);
      const written = this.record(format, one.record, etag, one.links);
      this.cache.set(this.recordKey(version, reader, one.target, format), written);
      if (targetKey(one.target) === wanted) answer = written;
      else companions.push({ target: one.target, answer: written });
    }
    // Only a distribution can be missing from what was built: its dataset has no such key.
    if (answer === undefined) throw new NotFoundError(`No distribution ${wanted}`);
    return { answer, version, companions };
  }

  /** The records of what `read` holds, one dataset's at a time (mapped as they are asked for). */
  private *built(
    read: Read,
    records: FdpRecords,
    iris: FdpIris,
  ): Generator<Built[number] & { links?: string[] }> {
    if ('built' in read) {
      yield* read.built;
      return;
    }
    for (const facts of read.facts.flat())
      yield* this.datasetRecords(records, iris, facts, read.lifetimes);
  }

  /**
   * What `target` shows, read in the snapshot `m`. `listed`: the version the snapshot reads
   * when it is the one the reader's listings were made at (their ids are then exactly what
   * the reader may see), else null.
   */
  private async read(
    m: EntityManager,
    reader: FdpReader,
    target: RecordTarget,
    listed: string | null,
    records: FdpRecords,
    iris: FdpIris,
  ): Promise<Read> {
    const repo = this.dcatRepository;
    const { viewer } = reader;
    if (target.kind === 'root') {
      const times = await repo.lifetime(m, viewer);
      return { built: [{ target, record: records.root(this.times(times)) }] };
    }
    if (target.kind === 'catalog') {
      const size = this.settings.DCAT_PAGE_SIZE;
      const total = await repo.count(m, viewer);
      const last = Math.max(1, Math.ceil(total / size));
      if (target.page > last) throw new NotFoundError(`The catalog has ${last} page(s)`);
      const { ids, accessions } = await repo.pageMembers(m, viewer, (target.page - 1) * size, size);
      const times = await repo.lifetime(m, viewer);
      const page = { number: target.page, last, total };
      const record = records.catalog(
        accessions.map((a) => iris.dataset(a)),
        page,
        this.times(times),
      );
      const links = [];
      if (last > 1) {
        links.push(`<http://www.w3.org/ns/ldp#Page>; rel="type"`);
        links.push(`<${iris.page(1)}>; rel="first"`, `<${iris.page(last)}>; rel="last"`);
        if (page.number < last) links.push(`<${iris.page(page.number + 1)}>; rel="next"`);
        if (page.number > 1) links.push(`<${iris.page(page.number - 1)}>; rel="prev"`);
      }
      const index = new Map(accessions.map((a, i) => [a, i]));
      return { built: [{ target, record, links }], listing: { ids, index } };
    }
    const ahead =
      listed === null ? undefined : this.ahead(`${listed}|${reader.identity}`, target.accession);
    let ids = ahead;
    if (ids === undefined) {
      ids = await repo.pageIds(m, viewer, 0, 1, target.accession);
      if (ids.length === 0) {
        if (await repo.withdrawn(m, target.accession))
          throw new GoneError(`Dataset ${target.accession} has been withdrawn`);
        throw new NotFoundError(`No dataset ${target.accession}`);
      }
    }
    const facts = await this.dcat.facts(m, viewer, ids);
    return { facts, lifetimes: await repo.lifetimes(m, ids) };
  }

  /** A dataset's record and its distributions' records. */
  private datasetRecords(
    records: FdpRecords,
    iris: FdpIris,
    facts: DatasetFacts,
    lifetimes: Map<string, { issued: string | null; modified: string | null }>,
  ): Built {
    const times = lifetimes.get(facts.accession) ?? { issued: null, modified: null };
    const split = records.dataset(facts, this.times(times, facts.modified));
    const out: Built = [];
    const prefix = iris.distribution(iris.dataset(facts.accession), facts.accession, '');
    for (const [id, record] of split)
      out.push({
        target:
          record.kind === 'dataset'
            ? { kind: 'dataset', accession: facts.accession }
            : {
                kind: 'distribution',
                accession: facts.accession,
                key: decodeURIComponent(id.slice(prefix.length)),
              },
        record,
      });
    return out;
  }

  /** The ids of the datasets after `accession` (itself first) on a listing the reader read. */
  private ahead(key: string, accession: string): number[] | undefined {
    for (const listing of this.listings) {
      if (listing.key !== key) continue;
      const at = listing.index.get(accession);
      if (at !== undefined) return listing.ids.slice(at, at + READ_AHEAD);
    }
    return undefined;
  }

  private remember(listing: Listing) {
    this.listings = [listing, ...this.listings.filter((l) => l !== listing)].slice(0, LISTINGS);
  }

  private profileKind(name: string): ProfileKind {
    if (!(PROFILE_KINDS as readonly string[]).includes(name))
      throw new NotFoundError(`No profile ${name}`);
    return name as ProfileKind;
  }

  private times(
    t: { issued: string | null; modified: string | null },
    fallback?: string,
  ): RecordTimes {
    return {
      issued: t.issued,
      modified: t.modified ?? fallback ?? new Date(0).toISOString().replace('.000', ''),
    };
  }

  private record(
    format: FdpFormat,
    record: FdpRecord,
    etag: string,
    links: string[] = [],
  ): FdpAnswer {
    const { body, bytes, mediaType } = this.written(format, record.nodes);
    const own = this.recordLinks(record.kind);
    return {
      body,
      bytes,
      mediaType,
      etag,
      lastModified: new Date(record.modified).toUTCString(),
      // The links every record of its kind has, shared by all of them.
      links: links.length === 0 ? own : [...own, ...links],
    };
  }

  /** The Link values of every record of `kind`: its profile, its shapes, its LDP type. */
  private recordLinks(kind: ProfileKind): readonly string[] {
    let links = this.linksByKind.get(kind);
    if (links === undefined) {
      const base = this.settings.source;
      links = Object.freeze([
        `<${profileIri(base, kind)}>; rel="profile"`,
        `<${shaclIri(base, kind)}>; rel="describedby"`,
        `<http://www.w3.org/ns/ldp#RDFSource>; rel="type"`,
      ]);
      this.linksByKind.set(kind, links);
    }
    return links;
  }

  /** A record's body: Turtle after the shared prefix block, JSON-LD whole. */
  private written(format: FdpFormat, nodes: RdfNode[]) {
    if (format !== 'ttl') {
      const { body, mediaType } = this.serialise(format, nodes);
      const whole = encoded(body);
      return { body: [whole], bytes: whole.length, mediaType };
    }
    const writer = rdfWriter(format, '');
    const own = encoded(writer.nodes(nodes) + writer.end());
    return {
      body: [TURTLE_HEAD, own],
      bytes: TURTLE_HEAD.length + own.length,
      mediaType: writer.mediaType,
    };
  }

  private serialise(format: FdpFormat, nodes: RdfNode[]) {
    const writer = rdfWriter(format, `${this.settings.source}/api/dcat/context.jsonld`);
    return {
      body: writer.start() + writer.nodes(nodes) + writer.end(),
      mediaType: writer.mediaType,
    };
  }
}

/** Where records are encoded before their bytes are copied out (see `encoded`). */
const SCRATCH = Buffer.allocUnsafeSlow(256 * 1024);

/**
 * `text` as UTF-8 in an allocation of its own (a cached body, see ownedCopy). Encoded into a
 * buffer kept for it, then copied out: measuring it first (Buffer.byteLength) would read the
 * whole text once more than encoding does, and Buffer.from then a copy would allocate twice.
 */
function encoded(text: string): Buffer {
  // At most three bytes per UTF-16 unit: only a text that may not fit is measured.
  if (3 * text.length > SCRATCH.length) {
    const bytes = Buffer.byteLength(text);
    if (bytes > SCRATCH.length) {
      const own = Buffer.allocUnsafeSlow(bytes);
      own.write(text);
      return own;
    }
  }
  return ownedCopy(SCRATCH.subarray(0, SCRATCH.write(text)));
}

/** A target as a key part: what a GET asks, in a fixed order. */
function targetKey(target: FdpTarget): string {
  switch (target.kind) {
    case 'root':
      return 'root';
    case 'catalog':
      return `catalog ${target.page}`;
    case 'dataset':
      return `dataset ${target.accession}`;
    case 'distribution':
      return `distribution ${target.accession} ${target.key}`;
    case 'profile':
    case 'shacl':
      return `${target.kind} ${target.profile}`;
  }
}
