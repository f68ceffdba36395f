// Runs an HTTP load (closed loop at a concurrency, or open loop at a rate) from a worker thread, so the
// client does not share the server's event loop, and summarizes the latencies.
import { Worker } from 'node:worker_threads';
import { type Measurement, summarize } from './measure.ts';

export function runHttpLoad(
  name: string,
  job: Record<string, unknown> & { seconds: number },
): Promise<Measurement> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./http-load-worker.mjs', import.meta.url), { workerData: job });
    worker.once('message', (result: { latencies: number[]; errors: number }) =>
      resolve(summarize(name, result.latencies, job.seconds, result.errors)),
    );
    worker.once('error', reject);
  });
}
