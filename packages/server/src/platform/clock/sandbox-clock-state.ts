// Where the sandbox clock's offset is kept (sandbox_state) and the channel on which an advance is announced
// to the other processes, which adopt it (server.ts) and acknowledge (sandbox/http/clock-routes.ts waits).
import type { Db } from '../db/database.ts';

export const CLOCK_CHANNEL = 'tessera_clock';

export async function loadSandboxClockOffset(db: Db): Promise<number> {
  const row = await db.selectFrom('sandbox_state').select('clock_offset_ms').executeTakeFirst();
  return Number(row?.clock_offset_ms ?? 0);
}
