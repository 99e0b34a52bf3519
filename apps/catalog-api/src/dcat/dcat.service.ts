import { Inject, Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { NotFoundError } from '@app/errors';
import { TimeSlice } from '@app/platform';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';
import context from './dcat-ap-3.0.1.context.json';
import { DcatConfig, DcatExporter, DcatIris } from './dcat.exporter';
import { DatasetFacts, DcatRepository, DcatViewer } from './dcat.repository';
import type { RdfNode } from './rdf-graph';
import { RdfFormat, rdfWriter } from './rdf-writers';

/** Datasets mapped at a time while a page is written. */
const BATCH = 100;

/**
 * The DCAT-AP 3.0.1 context with its five `Xsd:*` terms removed: conforming JSON-LD 1.1
 * processors refuse them and nothing in the context uses them (decisions/dcat-export.md).
 */
export const DCAT_CONTEXT = JSON.stringify(context);

/**
 * An answer read whole from the database (its transaction ended, its connection back in the
 * pool) and written as it is sent: a client that reads slowly or not at all holds no
 * connection, only the page's facts, and the mapping and serialising wait for it.
 */
export interface RdfAnswer {
  mediaType: string;
  body: AsyncGenerator<string>;
  /** The datasets whose facts it holds until sent: the weight of its memory (SlowReaders). */
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
   * in one REPEATABLE READ transaction, BATCH datasets a statement, and the transaction ends
   * before the first byte is sent; the body maps and serialises BATCH datasets at a time as
   * the client takes them, so a page is never one graph in memory.
   */
  async catalogPage(viewer: DcatViewer, format: RdfFormat, page: number): Promise<RdfAnswer> {
    const exporter = this.exporter();
    const read = await this.inSnapshot(async (manager) => {
      const total = await this.dcat.count(manager, viewer);
      const size = this.settings.DCAT_PAGE_SIZE;
      const last = Math.max(1, Math.ceil(total / size));
      if (page > last) throw new NotFoundError(`The catalog has ${last} page(s)`);
      const ids = await this.dcat.pageIds(manager, viewer, (page - 1) * size, size);
      const accessions = ids.length === 0 ? [] : await this.dcat.accessions(manager, ids);
      return {
        info: { number: page, last, total },
        iris: accessions.map((accession) => exporter.iris.dataset(accession)),
        batches: await this.facts(manager, viewer, ids),
      };
    });
    const head =
      page === 1
        ? exporter.catalogNodes(read.iris, read.info)
        : exporter.catalogMembers(read.iris, read.info);
    return this.answer(format, exporter, head, read.batches);
  }

  /** One dataset the viewer may see, by accession; 404 otherwise. */
  async dataset(viewer: DcatViewer, format: RdfFormat, accession: string): Promise<RdfAnswer> {
    const exporter = this.exporter();
    const batches = await this.inSnapshot(async (manager) => {
      const ids = await this.dcat.pageIds(manager, viewer, 0, 1, accession);
      if (ids.length === 0) throw new NotFoundError(`No dataset ${accession}`);
      return this.facts(manager, viewer, ids);
    });
    return this.answer(format, exporter, exporter.agentNodes(), batches);
  }

  /**
   * The facts of `ids`, BATCH datasets a statement; the next batch is asked for before this one
   * is stored, so PostgreSQL reads it meanwhile.
   */
  async facts(
    manager: EntityManager,
    viewer: DcatViewer,
    ids: number[],
  ): Promise<DatasetFacts[][]> {
    const batch = (i: number) => {
      const facts = this.dcat.facts(manager, viewer, ids.slice(i, i + BATCH));
      // Handled when awaited; until then a failure must not count as an unhandled rejection.
      facts.catch(() => undefined);
      return facts;
    };
    const batches: DatasetFacts[][] = [];
    let next = ids.length > 0 ? batch(0) : undefined;
    try {
      for (let i = 0; next !== undefined; i += BATCH) {
        const facts = await next;
        next = i + BATCH < ids.length ? batch(i + BATCH) : undefined;
        batches.push(facts);
      }
    } finally {
      // A failed batch: the one asked for ahead ends before the transaction does.
      await next?.catch(() => undefined);
    }
    return batches;
  }

  private answer(
    format: RdfFormat,
    exporter: DcatExporter,
    head: RdfNode[],
    batches: DatasetFacts[][],
  ): RdfAnswer {
    const writer = rdfWriter(format, exporter.iris.context());
    async function* body(): AsyncGenerator<string> {
      yield writer.start() + writer.nodes(head);
      // Mapped and written a slice of time at a time, the event loop let run between slices:
      // a page's chunks would otherwise follow each other in one chain of promises, while the
      // socket takes them, and health probes would wait for the whole page. A slice ends after
      // the dataset that spent it, mapped and serialised, and concurrent exports take turns, one
      // slice per turn of the event loop (TimeSlice). Each dataset's nodes are written as soon as
      // they are mapped: a slice's text is far smaller than its nodes, which would otherwise
      // outlive the young generation (4 MiB semi-spaces as deployed) and be collected as old.
      // Each batch is let go once written: what is sent is not kept.
      const slice = new TimeSlice();
      for (let facts = batches.shift(); facts !== undefined; facts = batches.shift()) {
        let text = '';
        for (const dataset of facts) {
          text += writer.nodes(exporter.datasetNodes(dataset));
          if (!slice.spent) continue;
          yield text;
          text = '';
          await slice.next();
        }
        if (text !== '') yield text;
      }
      yield writer.end();
    }
    const datasets = batches.reduce((sum, facts) => sum + facts.length, 0);
    return { mediaType: writer.mediaType, body: body(), datasets };
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
