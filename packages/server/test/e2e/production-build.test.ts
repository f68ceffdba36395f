// The production build as the Dockerfile uses it: `npm run build` compiles the server to
// packages/server/dist, and `node packages/server/dist/main.js serve` runs it with no TypeScript at start —
// ready, its pages' assets and the guides found from dist, a payments order through the API.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APPROVED_CARD, aDataDir, ServerProcess } from '../harness/server-process.ts';

const SERVER = fileURLToPath(new URL('../../', import.meta.url));
const MAIN = `${SERVER}dist/main.js`;

let data: Awaited<ReturnType<typeof aDataDir>>;
beforeAll(async () => {
  await promisify(execFile)(process.execPath, [`${SERVER}scripts/build.mjs`], {
    cwd: SERVER,
    timeout: 240_000,
  });
  data = await aDataDir();
}, 300_000);
afterAll(() => data?.remove());

describe('npm run build', () => {
  it('compiles a server that runs as plain JavaScript', async () => {
    expect(existsSync(MAIN)).toBe(true);
    const server = await ServerProcess.start({ TESSERA_DATA_DIR: data.dir }, ['serve'], MAIN);
    try {
      expect((await server.request('GET', '/readyz')).status).toBe(200);
      for (const asset of [
        '/assets/page.css',
        '/console/assets/console.css',
        '/docs/guides/quickstart-payments',
      ]) {
        expect((await server.request('GET', asset)).status, asset).toBe(200);
      }
      const merchant = await server.admin<{ apiKey: string }>('POST', '/merchants', {
        name: 'Built',
        sites: [{ name: 'web' }],
      });
      const auth = { authorization: `Bearer ${merchant.body.apiKey}` };
      const customer = await server.request<{ data: { id: number } }>('POST', '/payments/customer', {
        headers: auth,
        form: { identifier: 'c-1', email: 'a@example.com', firstName: 'Ada', lastName: 'L', country: 'RO' },
      });
      const order = await server.request('POST', '/payments/order', {
        headers: auth,
        form: {
          amount: '10.00',
          currency: 'EUR',
          orderType: 'purchase',
          customerId: String(customer.body.data.id),
          ...APPROVED_CARD,
        },
      });
      expect(order.status).toBe(201);
    } finally {
      await server.stop();
    }
  }, 180_000);
});
