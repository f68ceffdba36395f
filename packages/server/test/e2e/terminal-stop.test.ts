// Ctrl-C in a terminal (README, Quick start): the terminal sends SIGINT to every process of the command's
// group — Tessera and, unless it is kept apart, the embedded Postgres it started. A clean stop logs no
// error: nothing at level 50 or above, no stack.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aDataDir, ServerProcess } from '../harness/server-process.ts';

let data: Awaited<ReturnType<typeof aDataDir>>;
beforeAll(async () => {
  data = await aDataDir();
});
afterAll(() => data.remove());

describe('Ctrl-C in a terminal', () => {
  it('stops cleanly when the whole process group gets SIGINT, logging no error', async () => {
    const server = await ServerProcess.start(
      { TESSERA_DATA_DIR: data.dir, LOG_LEVEL: 'info' },
      ['serve'],
      undefined,
      { ownProcessGroup: true },
    );
    // Some work first, so the job queue and the pool hold connections when the signal comes.
    expect((await server.admin('POST', '/partners', { name: 'Ctrl-C' })).status).toBe(201);
    const { code } = await server.stop('SIGINT', { group: true });
    expect(code).toBe(0);
    const errors = server
      .output()
      .split('\n')
      .filter((line) => /"level":(5|6)\d/.test(line) || /\bERROR\b|\bFATAL\b/.test(line));
    expect(errors).toEqual([]);
    expect(server.output()).not.toContain('terminating connection due to administrator command');
  });
});
