// The bench's load generator, in its own process so it shares no event loop with what it measures: an
// undici Pool of keep-alive connections (cheap per request, unlike fetch), closed loop (N requests always
// in flight) or open loop (a fixed rate, latency measured from each request's scheduled time, so a
// stalled server cannot hide its queue). Reports latencies, errors and its own CPU time.
// (Plain JavaScript: it is forked with no loader.)
import { randomUUID } from 'node:crypto';
import { Pool } from 'undici';

/**
 * @typedef {{ origin: string, path: string, headers: Record<string, string>, bodies: string[], expect: string,
 *   keyed?: boolean, mode: 'closed' | 'open', concurrency: number, ratePerSecond: number, seconds: number,
 *   warmupSeconds: number }} Job
 */

process.once('message', async (/** @type {Job} */ job) => {
  // The IPC channel stops holding the process once its listener is gone: this keeps it until the end.
  const keepAlive = setInterval(() => undefined, 1000);
  const pool = new Pool(job.origin, {
    connections: job.mode === 'closed' ? job.concurrency : 128,
    pipelining: 1,
    keepAliveTimeout: 60_000,
    headersTimeout: 60_000,
    bodyTimeout: 60_000,
  });
  /** @type {number[]} */
  const latencies = [];
  let errors = 0;
  let firstError = '';
  let measuring = false;
  let cpuAtStart = process.cpuUsage();

  const once = async (scheduledAt) => {
    const body = job.bodies[Math.floor(Math.random() * job.bodies.length)];
    try {
      // A keyed run sends a new Idempotency-Key with every request, as the SDK does.
      const headers = job.keyed ? { ...job.headers, 'idempotency-key': randomUUID() } : job.headers;
      const res = await pool.request({ method: 'POST', path: job.path, headers, body });
      const text = await res.body.text();
      if (res.statusCode >= 300 || !text.includes(job.expect)) {
        throw new Error(`status ${res.statusCode}: ${text.slice(0, 300)}`);
      }
      return performance.now() - scheduledAt;
    } catch (err) {
      if (measuring || job.warmupSeconds === 0) {
        errors++;
        firstError ||= String(err?.message ?? err);
      }
      return undefined;
    }
  };

  const start = performance.now();
  const measureFrom = start + job.warmupSeconds * 1000;
  const ends = measureFrom + job.seconds * 1000;
  // Tells the parent when the measured window opens and closes, so it can read the server's CPU then.
  const warmupTimer = setTimeout(() => {
    measuring = true;
    cpuAtStart = process.cpuUsage();
    process.send?.({ phase: 'measuring' });
  }, job.warmupSeconds * 1000);

  if (job.mode === 'closed') {
    await Promise.all(
      Array.from({ length: job.concurrency }, async () => {
        for (;;) {
          const began = performance.now();
          if (began >= ends) return;
          const latency = await once(began);
          if (latency !== undefined && began >= measureFrom && performance.now() <= ends) {
            latencies.push(latency);
          }
        }
      }),
    );
  } else {
    const intervalMs = 1000 / job.ratePerSecond;
    /** @type {Promise<void>[]} */
    const inFlight = [];
    let sent = 0;
    // A coarse tick launches every request due by now: one timer per request would cost more CPU than
    // the requests at high rates.
    await new Promise((resolve) => {
      const tick = setInterval(() => {
        const now = performance.now();
        for (;;) {
          const due = start + sent * intervalMs;
          if (due > now) break;
          if (due >= ends) {
            clearInterval(tick);
            resolve(undefined);
            return;
          }
          sent++;
          inFlight.push(
            once(due).then((latency) => {
              if (latency !== undefined && due >= measureFrom) latencies.push(latency);
            }),
          );
        }
      }, 1);
    });
    await Promise.all(inFlight);
  }
  clearTimeout(warmupTimer);
  const cpu = process.cpuUsage(cpuAtStart);
  process.send?.({ phase: 'done' });
  await pool.close();
  // A large result is written to the channel asynchronously: disconnect only once it has gone.
  process.send?.(
    { phase: 'result', latencies, errors, firstError, clientCpuMs: (cpu.user + cpu.system) / 1000 },
    () => {
      clearInterval(keepAlive);
      process.disconnect?.();
    },
  );
});
