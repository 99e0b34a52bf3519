import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { AppError, NotFoundError } from '@app/errors';
import { CatalogVersionTracker } from '../catalog-version/catalog-version-tracker';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';
import { DcatRepository, type DcatViewer } from '../dcat/dcat.repository';
import { DcatService } from '../dcat/dcat.service';
import type { RdfNode } from '../dcat/rdf-graph';
import { rdfWriter } from '../dcat/rdf-writers';
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
  | { kind: 'root' }
  | { kind: 'catalog'; page: number }
  | { kind: 'dataset'; accession: string }
  | { kind: 'distribution'; accession: string; key: string }
  | { kind: 'profile'; profile: string }
  | { kind: 'shacl'; profile: string };

/** An answer written whole (records are small), with what conditional GETs compare. */
export interface FdpAnswer {
  body: Buffer;
  mediaType: string;
  etag: string;
  /** HTTP date; absent for the static profiles. */
  lastModified?: string;
  /** Link header values: profile, describedby, type, paging. */
  links: string[];
}

/** Answers kept for conditional and repeated GETs, per data version. */
const CACHE_ENTRIES = 2_000;
const CACHE_BYTES = 32 * 1024 * 1024;

export class GoneError extends AppError {
  constructor(description: string) {
    super(410, 'gone', description);
  }
}

@Injectable()
export class FdpService {
  private readonly cache = new Map<string, FdpAnswer>();
  private cachedBytes = 0;

  constructor(
    private readonly dcat: DcatService,
    private readonly dcatRepository: DcatRepository,
    private readonly versions: CatalogVersionTracker,
    @Inject(CATALOG_SETTINGS) private readonly settings: CatalogSettings,
  ) {}

  /**
   * The answer to `target` in `format`. Anonymous answers are kept per data version: a repeated
   * or conditional GET at the same version reads nothing from the database.
   */
  async answer(viewer: DcatViewer, target: FdpTarget, format: FdpFormat): Promise<FdpAnswer> {
    const version = viewer.kind === 'anonymous' ? this.versions.known() : null;
    const key = `${version}|${format}|${JSON.stringify(target)}`;
    if (version !== null) {
      const hit = this.cache.get(key);
      if (hit !== undefined) {
        this.cache.delete(key);
        this.cache.set(key, hit);
        return hit;
      }
    }
    const answer = await this.build(viewer, target, format);
    if (version !== null && this.versions.known() === version) this.keep(key, answer);
    return answer;
  }

  private keep(key: string, answer: FdpAnswer) {
    if (answer.body.length > CACHE_BYTES / 8) return;
    this.cache.set(key, answer);
    this.cachedBytes += answer.body.length;
    for (const [oldest, old] of this.cache) {
      if (this.cache.size <= CACHE_ENTRIES && this.cachedBytes <= CACHE_BYTES) break;
      this.cache.delete(oldest);
      this.cachedBytes -= old.body.length;
    }
  }

  private async build(
    viewer: DcatViewer,
    target: FdpTarget,
    format: FdpFormat,
  ): Promise<FdpAnswer> {
    const base = this.settings.source;
    if (target.kind === 'profile' || target.kind === 'shacl') {
      const kind = this.profileKind(target.profile);
      if (target.kind === 'shacl')
        return this.finish(Buffer.from(shaclOf(base, kind)), 'text/turtle', []);
      return this.write(format, profileNodes(base, kind), []);
    }
    const iris = new FdpIris(base);
    const exporter = this.dcat.exporter((b) => new FdpIris(b));
    const records = new FdpRecords(exporter, iris, base, this.settings.FDP_VP_DISCOVERABLE);
    const repo = this.dcatRepository;
    if (target.kind === 'root') {
      const times = await this.dcat.inSnapshot((m) => repo.lifetime(m, viewer));
      return this.record(format, records.root(this.times(times)));
    }
    if (target.kind === 'catalog') {
      const size = this.settings.DCAT_PAGE_SIZE;
      const read = await this.dcat.inSnapshot(async (m) => {
        const total = await repo.count(m, viewer);
        const last = Math.max(1, Math.ceil(total / size));
        if (target.page > last) throw new NotFoundError(`The catalog has ${last} page(s)`);
        const ids = await repo.pageIds(m, viewer, (target.page - 1) * size, size);
        const accessions = ids.length === 0 ? [] : await repo.accessions(m, ids);
        return { total, last, accessions, times: await repo.lifetime(m, viewer) };
      });
      const page = { number: target.page, last: read.last, total: read.total };
      const record = records.catalog(
        read.accessions.map((a) => iris.dataset(a)),
        page,
        this.times(read.times),
      );
      const links = [];
      if (read.last > 1) {
        links.push(`<http://www.w3.org/ns/ldp#Page>; rel="type"`);
        links.push(`<${iris.page(1)}>; rel="first"`, `<${iris.page(read.last)}>; rel="last"`);
        if (page.number < read.last) links.push(`<${iris.page(page.number + 1)}>; rel="next"`);
        if (page.number > 1) links.push(`<${iris.page(page.number - 1)}>; rel="prev"`);
      }
      return this.record(format, record, links);
    }
    const read = await this.dcat.inSnapshot(async (m) => {
      const ids = await repo.pageIds(m, viewer, 0, 1, target.accession);
      if (ids.length === 0) {
        if (await repo.withdrawn(m, target.accession))
          throw new GoneError(`Dataset ${target.accession} has been withdrawn`);
        throw new NotFoundError(`No dataset ${target.accession}`);
      }
      const [facts] = await repo.facts(m, viewer, ids);
      const times = await repo.lifetime(m, viewer, target.accession);
      return { facts, times };
    });
    const split = records.dataset(read.facts, this.times(read.times, read.facts.modified));
    const id =
      target.kind === 'dataset'
        ? iris.dataset(target.accession)
        : iris.distribution(target.accession, target.key);
    const record = split.get(id);
    if (record === undefined)
      throw new NotFoundError(
        `No distribution ${target.kind === 'distribution' ? target.key : ''} of ${target.accession}`,
      );
    return this.record(format, record);
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

  private record(format: FdpFormat, record: FdpRecord, links: string[] = []): FdpAnswer {
    const base = this.settings.source;
    const answer = this.write(format, record.nodes, [
      `<${profileIri(base, record.kind)}>; rel="profile"`,
      `<${shaclIri(base, record.kind)}>; rel="describedby"`,
      `<http://www.w3.org/ns/ldp#RDFSource>; rel="type"`,
      ...links,
    ]);
    answer.lastModified = new Date(record.modified).toUTCString();
    return answer;
  }

  private write(format: FdpFormat, nodes: RdfNode[], links: string[]): FdpAnswer {
    const writer = rdfWriter(format, `${this.settings.source}/api/dcat/context.jsonld`);
    const body = Buffer.from(writer.start() + writer.nodes(nodes) + writer.end());
    return this.finish(body, writer.mediaType, links);
  }

  private finish(body: Buffer, mediaType: string, links: string[]): FdpAnswer {
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`;
    return { body, mediaType, etag, links };
  }
}
