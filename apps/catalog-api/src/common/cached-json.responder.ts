import { Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { createHash } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { CatalogVersionRepository } from '../catalog-version/catalog-version.repository';
import { CatalogVersionTracker } from '../catalog-version/catalog-version.tracker';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';
import { FastReads, matchesEtag } from './fast-reads';
import { CachedResponse, ownedBody, ResponseCache } from './response-cache';

/** What makes two reads the same: route, caller identity and the validated parameters. */
export interface ReadKey {
  route: string;
  identity: string;
  params: Record<string, unknown>;
  /**
   * When the answer stops being right without any write (epoch ms): for data that depends on
   * the date. Such a key must carry the date in `params` too.
   */
  expiresAt?: number;
  /**
   * The producer runs exactly one SQL statement. One statement sees one snapshot, at least as
   * new as the version read before it, so it needs no transaction (three round trips fewer).
   */
  singleStatement?: boolean;
}

export type Producer = (manager: EntityManager) => Promise<unknown>;

function etagOf(body: Buffer): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`;
}

/**
 * Serves a read as JSON with an ETag, from the response cache when the catalog has not changed.
 * A miss builds the body in one REPEATABLE READ transaction together with the version it is
 * filed under, so an entry never mixes data from before and after a write.
 */
@Injectable()
export class CachedJsonResponder {
  private readonly cache: ResponseCache;

  constructor(
    @Inject(CATALOG_SETTINGS) settings: CatalogSettings,
    private readonly dataSource: DataSource,
    private readonly versions: CatalogVersionRepository,
    private readonly tracker: CatalogVersionTracker,
    private readonly fastReads: FastReads,
  ) {
    this.cache = new ResponseCache({
      maxEntries: settings.RESPONSE_CACHE_MAX_ENTRIES,
      maxBytes: settings.RESPONSE_CACHE_MAX_BYTES,
    });
  }

  /** Entries and bytes held now (for the metrics). */
  usage(): { entries: number; bytes: number } {
    return { entries: this.cache.size, bytes: this.cache.heldBytes };
  }

  async respond(req: Request, res: Response, key: ReadKey, produce: Producer): Promise<void> {
    const { version, entry } = await this.load(key, produce);
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('ETag', entry.etag);
    // Per-caller data: shared caches must not keep it, clients must revalidate.
    res.setHeader('Cache-Control', 'private, no-cache');
    res.setHeader('Vary', 'X-API-Key, Authorization');
    this.fastReads.remember(req, res, version, entry, key.expiresAt);
    if (matchesEtag(req.headers['if-none-match'], entry.etag)) {
      res.status(304).end();
      return;
    }
    res.status(200).send(entry.body);
  }

  private async load(
    key: ReadKey,
    produce: Producer,
  ): Promise<{ version: string; entry: CachedResponse }> {
    const seen = this.tracker.known() ?? (await this.versions.current());
    const hit = this.cache.get(this.cacheKey(seen, key));
    if (hit !== undefined) return { version: seen, entry: hit };
    // Filed under `seen`, a body may be newer than its version, never older: the next version
    // (its notification, or the re-read after a write) makes the entry unreachable.
    const { version, body } = key.singleStatement
      ? {
          version: seen,
          body: ownedBody(JSON.stringify(await produce(this.dataSource.manager))),
        }
      : await this.dataSource.transaction('REPEATABLE READ', async (manager) => ({
          version: await this.versions.current(manager),
          body: ownedBody(JSON.stringify(await produce(manager))),
        }));
    const entry = { body, etag: etagOf(body) };
    this.cache.set(this.cacheKey(version, key), entry);
    return { version, entry };
  }

  private cacheKey(version: string, key: ReadKey): string {
    const params = Object.keys(key.params)
      .sort()
      .map((name) => `${name}=${JSON.stringify(key.params[name])}`)
      .join('&');
    return `${version}|${key.identity}|${key.route}|${params}`;
  }
}
