export function freePort(): Promise<number>;
export function startEmbeddedPostgres(options: {
  dataDir: string;
  port?: number;
  persistent?: boolean;
}): Promise<{ url: string; port: number; stop(): Promise<void> }>;
export function firstClosedDirectory(
  path: string,
  user: { uid: number; gid: number },
): string | null;
export function embeddedPostgresBlocker(
  dataDir: string,
  options?: { isRoot?: boolean; postgresUser?: string },
): Promise<string | null>;
