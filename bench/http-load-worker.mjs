// (Plain JavaScript: Node 20 does not apply the tsx loader inside worker threads.)
// A load generator in its own thread (own event loop), so measuring the HTTP API does not steal the
// server's event loop. Closed loop (N concurrent) or open loop (a fixed rate); posts latencies back.
import { parentPort, workerData } from 'node:worker_threads';

/** @type {{ mode: 'closed' | 'open', url: string, headers: Record<string, string>, bodies: string[], expect: string, concurrency: number, ratePerSecond: number, seconds: number, warmupSeconds: number }} */
const job = workerData;
/** @type {number[]} */
const latencies = [];
let errors = 0;

async function once() {
  const body = job.bodies[Math.floor(Math.random() * job.bodies.length)];
  const began = performance.now();
  try {
    const res = await fetch(job.url, { method: 'POST', headers: job.headers, body });
    const text = await res.text();
    if (res.status >= 300 || !text.includes(job.expect)) throw new Error(`status ${res.status}`);
    return performance.now() - began;
  } catch {
    errors++;
    return undefined;
  }
}

async function closedLoop() {
  const start = performance.now();
  const warmupEnds = start + job.warmupSeconds * 1000;
  const ends = warmupEnds + job.seconds * 1000;
  await Promise.all(
    Array.from({ length: job.concurrency }, async () => {
      for (;;) {
        const began = performance.now();
        if (began >= ends) return;
        const latency = await once();
        if (latency !== undefined && began >= warmupEnds && performance.now() <= ends)
          latencies.push(latency);
      }
    }),
  );
}

async function openLoop() {
  const intervalMs = 1000 / job.ratePerSecond;
  const start = performance.now();
  /** @type {Promise<void>[]} */
  const inFlight = [];
  for (let i = 0; ; i++) {
    const due = start + i * intervalMs;
    if (due > start + job.seconds * 1000) break;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    inFlight.push(
      once().then((latency) => {
        if (latency !== undefined) latencies.push(latency);
      }),
    );
  }
  await Promise.all(inFlight);
}

await (job.mode === 'closed' ? closedLoop() : openLoop());
parentPort?.postMessage({ latencies, errors });
