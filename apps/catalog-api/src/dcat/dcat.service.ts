import { Inject, Injectable } from '@nestjs/common';
import { DataSource, type QueryRunner } from 'typeorm';
import { NotFoundError } from '@app/errors';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';
import context from './dcat-ap-3.0.1.context.json';
import { DcatConfig, DcatExporter } from './dcat.exporter';
import { DcatRepository, DcatViewer } from './dcat.repository';
import type { RdfNode } from './rdf-graph';
import { RdfFormat, rdfWriter, RdfWriter } from './rdf-writers';

/** Datasets mapped at a time while a page is written. */
const BATCH = 100;

/**
 * The DCAT-AP 3.0.1 context with its five `Xsd:*` terms removed: conforming JSON-LD 1.1
 * processors refuse them and nothing in the context uses them (decisions/dcat-export.md).
 */
export const DCAT_CONTEXT = JSON.stringify(context);

/** An answer whose body is written while it is sent. */
export interface RdfAnswer {
  mediaType: string;
  body: AsyncGenerator<string>;
  /** Ends the read's transaction; idempotent (the body calls it when done, the caller on close). */
  release: () => Promise<void>;
}

@Injectable()
export class DcatService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly dcat: DcatRepository,
    @Inject(CATALOG_SETTINGS) private readonly settings: CatalogSettings,
  ) {}

  /** The exporter of the configured catalog; 404 while the publisher is not configured. */
  private exporter(): DcatExporter {
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
    return new DcatExporter(config);
  }

  /**
   * Page `page` of the catalog as the viewer sees it. The page's checks run now (404 past the
   * last page); its body is read in one REPEATABLE READ transaction while it is sent, BATCH
   * datasets at a time, so a page never sits in memory as one graph.
   */
  async catalogPage(viewer: DcatViewer, format: RdfFormat, page: number): Promise<RdfAnswer> {
    const exporter = this.exporter();
    const runner = await this.snapshot();
    try {
      const total = await this.dcat.count(runner.manager, viewer);
      const size = this.settings.DCAT_PAGE_SIZE;
      const last = Math.max(1, Math.ceil(total / size));
      if (page > last) throw new NotFoundError(`The catalog has ${last} page(s)`);
      const ids = await this.dcat.pageIds(runner.manager, viewer, (page - 1) * size, size);
      const writer = rdfWriter(format, exporter.iris.context());
      const info = { number: page, last, total };
      const datasets = ids.length === 0 ? [] : await this.datasetIris(runner, ids);
      const head =
        page === 1
          ? exporter.catalogNodes(datasets, info)
          : exporter.catalogMembers(datasets, info);
      return this.answer(runner, viewer, writer, exporter, ids, head);
    } catch (error) {
      await end(runner);
      throw error;
    }
  }

  /** One dataset the viewer may see, by accession; 404 otherwise. */
  async dataset(viewer: DcatViewer, format: RdfFormat, accession: string): Promise<RdfAnswer> {
    const exporter = this.exporter();
    const runner = await this.snapshot();
    try {
      const ids = await this.dcat.pageIds(runner.manager, viewer, 0, 1, accession);
      if (ids.length === 0) throw new NotFoundError(`No dataset ${accession}`);
      const writer = rdfWriter(format, exporter.iris.context());
      return this.answer(runner, viewer, writer, exporter, ids, exporter.agentNodes());
    } catch (error) {
      await end(runner);
      throw error;
    }
  }

  private async datasetIris(runner: QueryRunner, ids: number[]): Promise<string[]> {
    const accessions = await this.dcat.accessions(runner.manager, ids);
    const iris = this.exporter().iris;
    return accessions.map((accession) => iris.dataset(accession));
  }

  private answer(
    runner: QueryRunner,
    viewer: DcatViewer,
    writer: RdfWriter,
    exporter: DcatExporter,
    ids: number[],
    head: RdfNode[],
  ): RdfAnswer {
    let ended: Promise<void> | undefined;
    const release = () => (ended ??= end(runner));
    return {
      mediaType: writer.mediaType,
      body: this.write(runner, viewer, writer, exporter, ids, head, release),
      release,
    };
  }

  private async *write(
    runner: QueryRunner,
    viewer: DcatViewer,
    writer: RdfWriter,
    exporter: DcatExporter,
    ids: number[],
    head: RdfNode[],
    release: () => Promise<void>,
  ): AsyncGenerator<string> {
    const batch = (i: number) => {
      const facts = this.dcat.facts(runner.manager, viewer, ids.slice(i, i + BATCH));
      // Handled when awaited; until then a failure must not count as an unhandled rejection.
      facts.catch(() => undefined);
      return facts;
    };
    // The next batch is asked for before this one is mapped: PostgreSQL reads it meanwhile.
    let next = ids.length > 0 ? batch(0) : undefined;
    try {
      yield writer.start() + writer.nodes(head);
      for (let i = 0; next !== undefined; i += BATCH) {
        const facts = await next;
        next = i + BATCH < ids.length ? batch(i + BATCH) : undefined;
        yield writer.nodes(facts.flatMap((f) => exporter.datasetNodes(f)));
      }
      yield writer.end();
    } finally {
      // A client that hung up: the batch asked for ahead ends before the transaction does.
      await next?.catch(() => undefined);
      await release();
    }
  }

  private async snapshot(): Promise<QueryRunner> {
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction('REPEATABLE READ');
      await this.dcat.withoutJit(runner.manager);
    } catch (error) {
      await runner.release();
      throw error;
    }
    return runner;
  }
}

async function end(runner: QueryRunner): Promise<void> {
  try {
    if (runner.isTransactionActive) await runner.rollbackTransaction();
  } finally {
    await runner.release();
  }
}
