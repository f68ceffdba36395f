// The app each HTTP scenario measures: the real server on the bench database, listening on a free local
// port, with rate limits out of the way, and a small JSON client for setting the scene.
import { randomBytes } from 'node:crypto';
import { parseConfig } from '../packages/server/src/config.ts';
import { createApp, type TesseraApp } from '../packages/server/src/server.ts';

export interface BenchApp {
  tessera: TesseraApp;
  base: string;
  admin: Record<string, string>;
  call<T>(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<T>;
}

export async function startBenchApp(databaseUrl: string): Promise<BenchApp> {
  const adminToken = `adm_${randomBytes(16).toString('hex')}`;
  const tessera = await createApp({
    config: parseConfig({ LOG_LEVEL: 'silent', PORT: '0', TESSERA_RATE_LIMIT_PER_MINUTE: '100000000' }),
    databaseUrl,
    adminToken,
    encryptionKey: randomBytes(32),
    runBackgroundSweeps: false,
  });
  const base = await tessera.app.listen({ port: 0, host: '127.0.0.1' });
  const call = async <T>(method: string, path: string, headers: Record<string, string>, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  return { tessera, base, admin: { authorization: `Bearer ${adminToken}` }, call };
}
