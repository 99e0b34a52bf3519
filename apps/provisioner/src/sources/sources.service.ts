import { Injectable } from '@nestjs/common';
import { BadGatewayError, ConflictError, NotFoundError } from '@app/errors';
import { SourceRegistry } from './source-registry';
import { SourceRefusedError, SourceSystem, SourceUnavailableError } from './source-system';

/**
 * Source lookups for the HTTP routes: unknown name -> 404, source down -> 502, metadata that
 * cannot be used (a linked or oversized submission.json...) -> 409 with every problem.
 */
@Injectable()
export class SourcesService {
  constructor(private readonly registry: SourceRegistry) {}

  get(name: string): SourceSystem {
    const source = this.registry.get(name);
    if (!source) throw new NotFoundError(`Unknown source: ${name}`, { source: name });
    return source;
  }

  /** Runs a call against a source, turning its typed failures into their HTTP answers. */
  async ask<T>(call: Promise<T>): Promise<T> {
    try {
      return await call;
    } catch (error) {
      if (error instanceof SourceUnavailableError)
        throw new BadGatewayError(error.message, { source: error.source });
      if (error instanceof SourceRefusedError)
        throw new ConflictError(error.message, {
          source: error.source,
          reason: 'metadata_refused',
          problems: error.problems,
        });
      throw error;
    }
  }
}
