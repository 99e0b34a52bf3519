import { Injectable } from '@nestjs/common';
import { BadGatewayError, NotFoundError } from '@app/errors';
import { SourceRegistry } from './source-registry';
import { SourceSystem, SourceUnavailableError } from './source-system';

/** Source lookups for the HTTP routes: unknown name -> 404, source down -> 502. */
@Injectable()
export class SourcesService {
  constructor(private readonly registry: SourceRegistry) {}

  get(name: string): SourceSystem {
    const source = this.registry.get(name);
    if (!source) throw new NotFoundError(`Unknown source: ${name}`, { source: name });
    return source;
  }

  /** Runs a call against a source, turning "the source system is down" into a 502. */
  async ask<T>(call: Promise<T>): Promise<T> {
    try {
      return await call;
    } catch (error) {
      if (error instanceof SourceUnavailableError)
        throw new BadGatewayError(error.message, { source: error.source });
      throw error;
    }
  }
}
