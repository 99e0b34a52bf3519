import { PassThrough, type Readable } from 'node:stream';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { NotFoundError } from '@app/errors';
import { TimeSlice } from '@app/platform';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';
import { AnswerGone, AnswerOut } from './answer-out';
import context from './dcat-ap-3.0.1.context.json';
import { DcatConfig, DcatExporter, DcatIris } from './dcat.exporter';
import { DatasetFacts, DcatRepository, DcatViewer } from './dcat.repository';
import { factsBatches } from './facts-batches';
import type { RdfNode } from './rdf-graph';
import { RdfFormat, RdfWriter, rdfWriter } from './rdf-writers';

/**
 * The DCAT-AP 3.0.1 context with its five `Xsd:*` terms removed: conforming JSON-LD 1.1
 * processors refuse them and nothing in the context uses them (decisions/dcat-export.md).
 */
export const DCAT_CONTEXT = JSON.stringify(context);

/**
 * An answer begun: its head is known and written, and the rest of it is read from PostgreSQL and
 * written into `body` while the client takes what is there (decisions/dcat-sent-while-read.md).
 * A failure from here on destroys `body` with the error: the response is aborted, never ended
 * short as if it were whole.
 */
export interface RdfAnswer {
  mediaType: string;
  body: Readable;
  /** The datasets it holds until sent: the weight of its memory (SlowReaders). */
  datasets: number;
}

/** A read that writes its answer: `begin` once its head is known, then the rest into `out`. */
type AnswerRead = (manager: EntityManager, begin: (datasets: number) => AnswerOut) => Promise<void>;

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
   * in one REPEATABLE READ transaction; its answer begins once its datasets are known, and each
   * batch of facts is mapped, serialised and sent while PostgreSQL reads the next (`written`).
   * The page's head (the catalog's members, the Hydra view) needs the catalog's count, read
   * after the first batch while that batch is mapped, and is written after it: a graph's
   * subjects may come in any order (decisions/dcat-page-pipeline.md).
   */
  async catalogPage(viewer: DcatViewer, format: RdfFormat, page: number): Promise<RdfAnswer> {
    const exporter = this.exporter();
    const writer = rdfWriter(format, exporter.iris.context());
    return this.sentWhileRead(writer.mediaType, async (manager, begin) => {
      const size = this.settings.DCAT_PAGE_SIZE;
      const { ids, accessions } = await this.dcat.pageMembers(
        manager,
        viewer,
        (page - 1) * size,
        size,
      );
      const lastOf = (total: number) => Math.max(1, Math.ceil(total / size));
      // A page without datasets is the first of an empty catalog, or past the last.
      if (ids.length === 0 && page > 1) {
        const last = lastOf(await this.dcat.count(manager, viewer));
        throw new NotFoundError(`The catalog has ${last} page(s)`);
      }
      const head = async () => {
        const total = await this.dcat.count(manager, viewer);
        const info = { number: page, last: lastOf(total), total };
        const iris = accessions.map((accession) => exporter.iris.dataset(accession));
        return page === 1 ? exporter.catalogNodes(iris, info) : exporter.catalogMembers(iris, info);
      };
      await this.written(manager, viewer, writer, exporter, begin(ids.length), head, ids);
    });
  }

  /** One dataset the viewer may see, by accession; 404 otherwise. */
  async dataset(viewer: DcatViewer, format: RdfFormat, accession: string): Promise<RdfAnswer> {
    const exporter = this.exporter();
    const writer = rdfWriter(format, exporter.iris.context());
    return this.sentWhileRead(writer.mediaType, async (manager, begin) => {
      const ids = await this.dcat.pageIds(manager, viewer, 0, 1, accession);
      if (ids.length === 0) throw new NotFoundError(`No dataset ${accession}`);
      const head = () => Promise.resolve(exporter.agentNodes());
      await this.written(manager, viewer, writer, exporter, begin(1), head, ids);
    });
  }

  /** The facts of `ids`, in batches (factsBatches): the FAIR Data Point's dataset records. */
  async facts(
    manager: EntityManager,
    viewer: DcatViewer,
    ids: number[],
  ): Promise<DatasetFacts[][]> {
    return this.batches(ids, (batch) => this.dcat.facts(manager, viewer, batch));
  }

  /**
   * `read` of `ids`, a batch at a time (factsBatches), each batch handed to `each` (else
   * stored) once the next is asked for, so PostgreSQL reads it meanwhile.
   */
  private async batches<T>(
    ids: number[],
    read: (ids: number[]) => Promise<T[]>,
    each?: (batch: T[]) => Promise<void>,
  ): Promise<T[][]> {
    const slices = factsBatches(ids);
    const ask = (i: number) => {
      if (i >= slices.length) return undefined;
      const rows = read(slices[i]);
      // Handled when awaited; until then a failure must not count as an unhandled rejection.
      rows.catch(() => undefined);
      return rows;
    };
    const batches: T[][] = [];
    let next = ask(0);
    try {
      for (let i = 1; next !== undefined; i += 1) {
        const rows = await next;
        next = ask(i);
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
   * Writes the answer into `out`: the writer's start at once, then the datasets `ids` read in
   * `manager`'s snapshot, each batch mapped, serialised and sent while the next is read (the
   * page takes the longer of the two, not their sum, and its first bytes leave after one small
   * statement). `head` (nodes that are not datasets') is asked for once the first batch is, so
   * its statements run while that batch is mapped, and written after it.
   * Mapped a slice of time at a time, the event loop let run between slices, so health probes
   * never wait for a page and the socket takes what is written; concurrent exports take turns,
   * one slice per turn of the event loop (TimeSlice). Each dataset's nodes are written as soon
   * as they are mapped and their text encoded at once (Utf8Chunks): nodes and text die young
   * (4 MiB semi-spaces as deployed) instead of being collected as old. A batch's facts wait as
   * JSON text, a string a dataset, each parsed only when it is mapped (`factsText`), so its
   * objects die young too.
   */
  private async written(
    manager: EntityManager,
    viewer: DcatViewer,
    writer: RdfWriter,
    exporter: DcatExporter,
    out: AnswerOut,
    head: () => Promise<RdfNode[]>,
    ids: number[],
  ): Promise<void> {
    out.write(writer.start());
    out.flush();
    const slice = new TimeSlice();
    let nodes: Promise<RdfNode[]> | undefined;
    const headNodes = () => {
      // Handled when awaited; until then a failure must not count as an unhandled rejection.
      nodes = head();
      nodes.catch(() => undefined);
    };
    const read = (batch: number[]) => {
      const texts = this.dcat.factsText(manager, viewer, batch);
      if (nodes === undefined) headNodes();
      return texts;
    };
    let headWritten = false;
    try {
      await this.batches(ids, read, async (texts) => {
        for (const text of texts) {
          const dataset = JSON.parse(text) as DatasetFacts;
          out.write(writer.nodes(exporter.datasetNodes(dataset)));
          if (slice.spent) await slice.next();
        }
        if (!headWritten) {
          out.write(writer.nodes(await nodes!));
          headWritten = true;
        }
        out.flush();
      });
      if (nodes === undefined) headNodes();
      if (!headWritten) out.write(writer.nodes(await nodes!));
    } finally {
      // A failed batch: the head's statements end before the transaction does.
      await nodes?.catch(() => undefined);
    }
    out.write(writer.end());
    out.flush();
  }

  /**
   * `read` in a snapshot (`inSnapshot`), answered once it begins its answer: a failure before
   * that rejects (the error envelope: 404, 500); one after destroys the answer's body with the
   * error, so its response is aborted. The body ends when the read's transaction has ended.
   */
  private sentWhileRead(mediaType: string, read: AnswerRead): Promise<RdfAnswer> {
    return new Promise((resolve, reject) => {
      let body: PassThrough | undefined;
      const begin = (datasets: number) => {
        body = new PassThrough();
        resolve({ mediaType, body, datasets });
        return new AnswerOut(body);
      };
      this.inSnapshot((manager) => read(manager, begin)).then(
        () => body?.end(),
        (error: unknown) => {
          if (body === undefined) reject(error as Error);
          else if (!(error instanceof AnswerGone)) body.destroy(error as Error);
        },
      );
    });
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
