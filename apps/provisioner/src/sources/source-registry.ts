import { DropzoneSource } from './dropzone/dropzone.source';
import { DssSource } from './dss/dss.source';
import type { SourceConfig, SourceLimits } from '../config/source-config';
import { SourceSystem } from './source-system';

/** The configured sources by name; built once from the SOURCES setting. */
export class SourceRegistry {
  private readonly byName = new Map<string, SourceSystem>();

  constructor(configs: SourceConfig[], limits: SourceLimits) {
    for (const config of configs) {
      this.byName.set(
        config.name,
        config.type === 'dropzone'
          ? new DropzoneSource(config, limits)
          : new DssSource(config, limits),
      );
    }
  }

  get(name: string): SourceSystem | null {
    return this.byName.get(name) ?? null;
  }

  all(): SourceSystem[] {
    return [...this.byName.values()];
  }
}
