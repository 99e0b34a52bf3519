export function freePort(): Promise<number>;
export function startEmbeddedPostgres(options: {
  dataDir: string;
  port?: number;
  persistent?: boolean;
}): Promise<{ url: string; port: number; stop(): Promise<void> }>;
