// Closed-loop load: N workers each run the operation back to back for a fixed time; latencies of every
// completed operation after the warm-up are kept for percentiles.

export interface Measurement {
  name: string;
  opsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  operations: number;
  errors: number;
}

export async function measure(
  name: string,
  options: { concurrency: number; seconds: number; warmupSeconds: number },
  operation: (worker: number) => Promise<void>,
): Promise<Measurement> {
  const latencies: number[] = [];
  let errors = 0;
  const start = performance.now();
  const warmupEnds = start + options.warmupSeconds * 1000;
  const ends = warmupEnds + options.seconds * 1000;
  const worker = async (index: number) => {
    for (;;) {
      const began = performance.now();
      if (began >= ends) return;
      try {
        await operation(index);
      } catch {
        errors++;
        continue;
      }
      const finished = performance.now();
      if (began >= warmupEnds && finished <= ends) latencies.push(finished - began);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, (_, i) => worker(i)));
  return summarize(name, latencies, options.seconds, errors);
}

const round = (n: number) => Math.round(n * 100) / 100;

export function summarize(name: string, latencies: number[], seconds: number, errors: number): Measurement {
  latencies.sort((a, b) => a - b);
  const percentile = (p: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? 0;
  return {
    name,
    opsPerSec: Math.round(latencies.length / seconds),
    p50Ms: round(percentile(50)),
    p99Ms: round(percentile(99)),
    operations: latencies.length,
    errors,
  };
}
