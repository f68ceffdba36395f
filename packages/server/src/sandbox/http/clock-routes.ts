// /sandbox/clock: the sandbox's time machine. Advancing runs every sweep that became due before the
// answer, so a client sees the consequences (expiries, retries, billing) in its next request; with
// several processes on one database, it answers once every live process reads the new time.
import type { FastifyBaseLogger } from 'fastify';
import { sql } from 'kysely';
import { z } from 'zod';
import { standardErrors, timestamp } from '../../admin/http/schemas.ts';
import type { SandboxClock } from '../../platform/clock/clock.ts';
import { CLOCK_CHANNEL } from '../../platform/clock/sandbox-clock-state.ts';
import type { Sweeps } from '../../platform/clock/sweeps.ts';
import type { ProcessRegistry } from '../../platform/cluster/process-registry.ts';
import type { Db } from '../../platform/db/database.ts';
import { runTransaction } from '../../platform/db/transact.ts';
import type { ZodApp } from '../../platform/http/api-scope.ts';

/** Ten years: enough for any billing scenario, small enough to catch a unit mistake. */
const MAX_ADVANCE_SECONDS = 10 * 366 * 24 * 60 * 60;

export interface ClockDeps {
  db: Db;
  clock: SandboxClock;
  sweeps: Sweeps;
  processes: ProcessRegistry;
}

/** The most due instants one advance steps through (ten years of daily bills fit) */
const MAX_STEPS = 5000;
/** How long an advance waits for the other processes to read the new time. */
const ACKNOWLEDGE_TIMEOUT_MS = 5000;

const clockView = z.object({ now: timestamp, offsetSeconds: z.number() });

export async function registerClockRoutes(app: ZodApp, deps: ClockDeps): Promise<void> {
  app.get(
    '/clock',
    {
      schema: {
        summary: 'The sandbox time',
        tags: ['clock'],
        response: { 200: clockView, ...standardErrors },
      },
    },
    async () => ({ now: deps.clock.now().toISOString(), offsetSeconds: deps.clock.offset / 1000 }),
  );

  app.post(
    '/clock/advance',
    {
      // Each call moves time on, and the other processes must see the committed offset before it answers:
      // it cannot be one replayable unit of work, so an Idempotency-Key is refused rather than ignored.
      config: { idempotency: 'refuse' },
      schema: {
        summary: 'Advance the sandbox clock and run everything that became due',
        tags: ['clock'],
        body: z.object({ seconds: z.number().int().positive().max(MAX_ADVANCE_SECONDS) }),
        response: {
          200: clockView.extend({ processed: z.record(z.string(), z.number().int()) }),
          ...standardErrors,
        },
      },
    },
    async (request) => {
      const processed = await advanceAndRunSweeps(deps, request.body.seconds, request.log);
      return { now: deps.clock.now().toISOString(), offsetSeconds: deps.clock.offset / 1000, processed };
    },
  );
}

/**
 * Moves the sandbox clock on by `seconds`, stepping through every due instant on the way (a bill, the
 * next period's, a retry) as if the time had passed, and runs what became due; answers what ran.
 */
export async function advanceAndRunSweeps(
  deps: ClockDeps,
  seconds: number,
  log: FastifyBaseLogger,
): Promise<Record<string, number>> {
  const processed: Record<string, number> = {};
  const count = (round: Record<string, number> | undefined) => {
    for (const [name, n] of Object.entries(round ?? {})) processed[name] = (processed[name] ?? 0) + n;
  };
  const target = deps.clock.now().getTime() + seconds * 1000;
  let lastDue: number | undefined;
  for (let step = 0; step < MAX_STEPS; step++) {
    const due = (await deps.sweeps.nextDue())?.getTime();
    if (due === undefined || due > target || due === lastDue) break;
    lastDue = due;
    const gap = due - deps.clock.now().getTime();
    if (gap > 0) {
      await advanceSandboxClock(deps, gap);
      await everyProcessSees(deps, log);
    }
    count(await deps.sweeps.runAll());
  }
  const rest = target - deps.clock.now().getTime();
  if (rest > 0) await advanceSandboxClock(deps, rest);
  await everyProcessSees(deps, log);
  count(await deps.sweeps.runAll());
  return processed;
}

/** Persists the new offset first, so other processes and the next start agree on the time. */
export async function advanceSandboxClock(deps: Pick<ClockDeps, 'db' | 'clock'>, ms: number): Promise<void> {
  const offset = await runTransaction(deps.db, async (tx) => {
    const row = await tx
      .updateTable('sandbox_state')
      .set({ clock_offset_ms: sql<string>`clock_offset_ms + ${ms}` })
      .returning('clock_offset_ms')
      .executeTakeFirstOrThrow();
    await sql`SELECT pg_notify(${CLOCK_CHANNEL}, ${row.clock_offset_ms})`.execute(tx);
    return Number(row.clock_offset_ms);
  });
  deps.clock.adopt(offset);
}

async function everyProcessSees(deps: ClockDeps, log: FastifyBaseLogger): Promise<void> {
  const offset = deps.clock.offset;
  await deps.processes.acknowledge(offset);
  const deadline = Date.now() + ACKNOWLEDGE_TIMEOUT_MS;
  while ((await deps.processes.countBehind(offset)) > 0) {
    if (Date.now() > deadline) {
      log.warn('a process did not acknowledge the clock advance in time');
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
