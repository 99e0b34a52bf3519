export function redisPong(port: number): Promise<boolean>;
export function startPrivateRedis(options: {
  dir: string;
  port?: number;
}): Promise<{ url: string; port: number; pid: number; stop(): Promise<void> }>;
