import { Inject, Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { NotFoundError } from '@app/errors';
import { TimeSlice } from '@app/platform';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';
import context from './dcat-ap-3.0.1.context.json';
import { DcatConfig, DcatExporter, DcatIris } from './dcat.exporter';
import { DatasetFacts, DcatRepository, DcatViewer } from './dcat.repository';
import type { RdfNode } from './rdf-graph';
import { RdfFormat, RdfWriter, rdfWriter } from './rdf-writers';
import { Utf8Chunks } from './utf8-chunks';

/**
 * Datasets read a statement, and mapped at a time while a page is written. Planning the facts
 * statement costs about as much as reading 25 datasets with it, so 250 (four statements a page
 * of 1,000) rather than 100 (decisions/dcat-larger-batches-as-text.md).
 */
const BATCH = 250;

/**
 * The DCAT-AP 3.0.1 context with its five `Xsd:*` terms removed: conforming JSON-LD 1.1
 * processors refuse them and nothing in the context uses them (decisions/dcat-export.md).
 */
export const DCAT_CONTEXT = JSON.stringify(context);

/**
 * An answer read whole from the database and serialised meanwhile (its transaction ended, its
 * connection back in the pool), sent as the client takes it: a client that reads slowly or not
 * at all holds no connection, only the page's bytes.
 */
export interface RdfAnswer {
  mediaType: string;
  body: AsyncGenerator<Buffer>;
  /** The datasets whose text it holds until sent: the weight of its memory (SlowReaders). */
  datasets: number;
}

@Injectable()
export class DcatService {
  /**
   * Reads at once, at most half the pool: many harvesters (anonymous ones too) asking pages
   * together wait here, holding no connection, while health and every other route keep theirs.
   */
  private readonly readSlots: number;
  private reading = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly dataSource: DataSource,
    private readonly dcat: DcatRepository,
    @Inject(CATALOG_SETTINGS) private readonly settings: CatalogSettings,
  ) {
    this.readSlots = Math.max(1, Math.floor(settings.DATABASE_POOL_SIZE / 2));
  }

  /**
   * The exporter of the configured catalog (its records named by `iris`, else under
   * /api/dcat); 404 while the publisher is not configured.
   */
  exporter(iris?: (base: string) => DcatIris): DcatExporter {
    const s = this.settings;
    if (s.DCAT_PUBLISHER_NAME === undefined)
      throw new NotFoundError('The DCAT catalog is not configured (DCAT_PUBLISHER_NAME is unset)');
    const config: DcatConfig = {
      base: s.source,
      publisherName: s.DCAT_PUBLISHER_NAME,
      publisherUri: s.DCAT_PUBLISHER_URI,
      publisherType: s.DCAT_PUBLISHER_TYPE,
      contactEmail: s.DCAT_CONTACT_EMAIL,
      applicableLegislation: s.applicableLegislation,
    };
    if (s.DCAT_HDAB_NAME !== undefined && s.DCAT_HDAB_EMAIL !== undefined)
      config.hdab = { name: s.DCAT_HDAB_NAME, uri: s.DCAT_HDAB_URI, email: s.DCAT_HDAB_EMAIL };
    return new DcatExporter(config, iris?.(s.source));
  }

  /**
   * Page `page` of the catalog as the viewer sees it, 404 past the last page. The page is read
   * in one REPEATABLE READ transaction, BATCH datasets a statement, and each batch is mapped and
   * serialised while PostgreSQL reads the next (`written`); the transaction ends before the
   * first byte is sent. A page is never one graph in memory: what it holds until sent is its
   * bytes.
   */
  async catalogPage(viewer: DcatViewer, format: RdfFormat, page: number): Promise<RdfAnswer> {
    const exporter = this.exporter();
    const writer = rdfWriter(format, exporter.iris.context());
    const read = await this.inSnapshot(async (manager) => {
      const total = await this.dcat.count(manager, viewer);
      const size = this.settings.DCAT_PAGE_SIZE;
      const last = Math.max(1, Math.ceil(total / size));
      if (page > last) throw new NotFoundError(`The catalog has ${last} page(s)`);
      const ids = await this.dcat.pageIds(manager, viewer, (page - 1) * size, size);
      const accessions = ids.length === 0 ? [] : await this.dcat.accessions(manager, ids);
      const info = { number: page, last, total };
      const iris = accessions.map((accession) => exporter.iris.dataset(accession));
      const head =
        page === 1 ? exporter.catalogNodes(iris, info) : exporter.catalogMembers(iris, info);
      return { ids, body: await this.written(manager, viewer, writer, exporter, head, ids) };
    });
    return this.answer(writer.mediaType, read.body, read.ids.length);
  }

  /** One dataset the viewer may see, by accession; 404 otherwise. */
  async dataset(viewer: DcatViewer, format: RdfFormat, accession: string): Promise<RdfAnswer> {
    const exporter = this.exporter();
    const writer = rdfWriter(format, exporter.iris.context());
    const body = await this.inSnapshot(async (manager) => {
      const ids = await this.dcat.pageIds(manager, viewer, 0, 1, accession);
      if (ids.length === 0) throw new NotFoundError(`No dataset ${accession}`);
      return this.written(manager, viewer, writer, exporter, exporter.agentNodes(), ids);
    });
    return this.answer(writer.mediaType, body, 1);
  }

  /** The facts of `ids`, BATCH datasets a statement (the FAIR Data Point's dataset records). */
  async facts(
    manager: EntityManager,
    viewer: DcatViewer,
    ids: number[],
  ): Promise<DatasetFacts[][]> {
    return this.batches(ids, (batch) => this.dcat.facts(manager, viewer, batch));
  }

  /**
   * `read` of `ids`, BATCH at a time, each batch handed to `each` (else stored) once the next is
   * asked for, so PostgreSQL reads it meanwhile.
   */
  private async batches<T>(
    ids: number[],
    read: (ids: number[]) => Promise<T[]>,
    each?: (batch: T[]) => Promise<void>,
  ): Promise<T[][]> {
    const batch = (i: number) => {
      const rows = read(ids.slice(i, i + BATCH));
      // Handled when awaited; until then a failure must not count as an unhandled rejection.
      rows.catch(() => undefined);
      return rows;
    };
    const batches: T[][] = [];
    let next = ids.length > 0 ? batch(0) : undefined;
    try {
      for (let i = 0; next !== undefined; i += BATCH) {
        const rows = await next;
        next = i + BATCH < ids.length ? batch(i + BATCH) : undefined;
        if (each === undefined) batches.push(rows);
        else await each(rows);
      }
    } finally {
      // A failed batch: the one asked for ahead ends before the transaction does.
      await next?.catch(() => undefined);
    }
    return batches;
  }

  /**
   * The answer's bytes: `head`, then the datasets `ids` read in `manager`'s snapshot, each batch
   * mapped and serialised while the next is read (the page takes the longer of the two, not
   * their sum). Mapped a slice of time at a time, the event loop let run between slices, so
   * health probes never wait for a page; concurrent exports take turns, one slice per turn of
   * the event loop (TimeSlice). Each dataset's nodes are written as soon as they are mapped and
   * their text encoded at once (Utf8Chunks): nodes and text die young (4 MiB semi-spaces as
   * deployed) instead of being collected as old. A batch's facts wait as JSON text, a string a
   * dataset, each parsed only when it is mapped (`factsText`), so its objects die young too.
   */
  private async written(
    manager: EntityManager,
    viewer: DcatViewer,
    writer: RdfWriter,
    exporter: DcatExporter,
    head: RdfNode[],
    ids: number[],
  ): Promise<Buffer[]> {
    const out = new Utf8Chunks();
    const chunks: Buffer[] = [];
    const keep = (chunk: Buffer | undefined) => {
      if (chunk !== undefined) chunks.push(chunk);
    };
    keep(out.write(writer.start()));
    keep(out.write(writer.nodes(head)));
    const slice = new TimeSlice();
    const read = (batch: number[]) => this.dcat.factsText(manager, viewer, batch);
    await this.batches(ids, read, async (texts) => {
      for (const text of texts) {
        const dataset = JSON.parse(text) as DatasetFacts;
        keep(out.write(writer.nodes(exporter.datasetNodes(dataset))));
        if (slice.spent) await slice.next();
      }
    });
    keep(out.write(writer.end()));
    keep(out.take());
    return chunks;
  }

  /** Bytes written already, sent as the client takes them and let go once sent. */
  private answer(mediaType: string, chunks: Buffer[], datasets: number): RdfAnswer {
    async function* body(): AsyncGenerator<Buffer> {
      for (let chunk = chunks.shift(); chunk !== undefined; chunk = chunks.shift()) yield chunk;
    }
    return { mediaType, body: body(), datasets };
  }

  /**
   * `read` in one REPEATABLE READ transaction without JIT, on a connection held only meanwhile,
   * once one of the read slots is free (first come, first served).
   */
  async inSnapshot<T>(read: (manager: EntityManager) => Promise<T>): Promise<T> {
    if (this.reading < this.readSlots) this.reading += 1;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await this.dataSource.transaction('REPEATABLE READ', async (manager) => {
        await this.dcat.withoutJit(manager);
        return read(manager);
      });
    } finally {
      // The slot goes to the next reader waiting, else back.
      const next = this.waiting.shift();
      if (next !== undefined) next();
      else this.reading -= 1;
    }
  }
}
