// `tessera serve` with TESSERA_WORKERS > 1: one primary process and N HTTP workers (node:cluster) over
// one database. The primary prepares what is shared (the sandbox's secrets, the embedded Postgres, the
// migrations), hands it to each worker over IPC (never in the environment), replaces a worker that dies,
// and on SIGTERM or SIGINT stops the workers (each drains as a single process does) before Postgres.
// The workers share the listening port; only the first runs the background sweeps and the job queue's
// maintenance, which also run once across processes by their own locks.
import cluster, { type Worker } from 'node:cluster';
import { type Booted, boot, servingPoolSize } from '../boot.ts';
import type { Config } from '../config.ts';
import { createApp } from '../server.ts';

interface Handover {
  databaseUrl: string;
  /** Each worker's pool, fitted to the database's connections (connection-budget.ts) */
  databasePoolSize: number;
  adminToken: string;
  encryptionKey: string;
}

type WorkerNews = { kind: 'ready' } | { kind: 'listening'; address: string };

/** Runs the primary: answers -1 while it serves (the process keeps running), or an exit code. */
export async function servePrimary(
  config: Config,
  onListening: (address: string, booted: Booted) => void,
): Promise<number> {
  const booted = await boot(config, { runMigrations: true });
  const databasePoolSize = await servingPoolSize(config, booted.databaseUrl).catch(async (err: unknown) => {
    await booted.stopDatabase();
    throw err;
  });
  const handover: Handover = {
    databaseUrl: booted.databaseUrl,
    databasePoolSize,
    adminToken: booted.adminToken,
    encryptionKey: booted.encryptionKey.toString('hex'),
  };
  let stopping = false;
  let announced = false;
  // Announced once every worker of the first start listens: until then a worker dying would leave the
  // port without a listener (the primary closes it when none is left), refusing connections.
  const listening = new Set<number>();
  const fork = (index: number): Worker => {
    const worker = cluster.fork({ TESSERA_WORKER_INDEX: String(index) });
    worker.on('message', (news: WorkerNews) => {
      // Asked for, not pushed at start: a message sent before the worker listens for it is lost.
      if (news.kind === 'ready') worker.send(handover);
      if (news.kind === 'listening' && !announced) {
        listening.add(index);
        if (listening.size < config.workers) return;
        announced = true;
        onListening(news.address, booted);
      }
    });
    worker.on('exit', (code, signal) => {
      if (stopping) return;
      process.stderr.write(`tessera: worker ${index} exited (${signal ?? code}); starting another\n`);
      workers[index] = fork(index);
    });
    return worker;
  };
  const workers = Array.from({ length: config.workers }, (_, index) => fork(index));

  const shutdown = () => {
    if (stopping) {
      process.stderr.write('tessera: forced exit\n');
      process.exit(1);
    }
    stopping = true;
    const backstop = setTimeout(() => {
      process.stderr.write('tessera: the workers overran the stop deadline; exiting\n');
      for (const worker of workers) worker.process.kill('SIGKILL');
      void booted.stopDatabase().finally(() => process.exit(1));
    }, config.shutdownTimeoutMs + 5000);
    backstop.unref();
    void (async () => {
      await Promise.all(
        workers.map(
          (worker) =>
            new Promise<void>((resolve) => {
              if (worker.isDead()) return resolve();
              worker.once('exit', () => resolve());
              worker.process.kill('SIGTERM');
            }),
        ),
      );
      await booted.stopDatabase();
      process.exit(0);
    })();
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
  return -1;
}

/** Runs one worker: waits for the primary's handover, then serves until told to stop. */
export async function serveWorker(config: Config): Promise<number> {
  const handover = new Promise<Handover>((resolve) => process.once('message', resolve));
  process.send?.({ kind: 'ready' } satisfies WorkerNews);
  const index = Number(process.env.TESSERA_WORKER_INDEX ?? 0);
  const tessera = await createApp({
    config: { ...config, databasePoolSize: (await handover).databasePoolSize },
    databaseUrl: (await handover).databaseUrl,
    adminToken: (await handover).adminToken,
    encryptionKey: Buffer.from((await handover).encryptionKey, 'hex'),
    runBackgroundSweeps: index === 0,
  });
  let stopping = false;
  const stop = (why: string) => {
    if (stopping) return;
    stopping = true;
    tessera.services.logger.info({ worker: index, why }, 'worker stopping');
    void tessera.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  // The terminal's Ctrl-C reaches every process of the group: the primary decides, the workers wait for it.
  process.on('SIGINT', () => undefined);
  // The primary is gone (killed): nobody will replace or stop this worker, so it stops by itself.
  process.on('disconnect', () => stop('the primary process is gone'));
  const address = await tessera.app.listen({ port: config.port, host: config.host });
  process.send?.({ kind: 'listening', address } satisfies WorkerNews);
  return -1;
}
