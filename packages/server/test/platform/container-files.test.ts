// The Dockerfile and compose.yaml cannot be built where the suite runs (no Docker), so they are held to
// the code they describe: the command and health path exist, the configuration they set is what the
// server reads, and the image's production-only install has what `serve` needs. (Their syntax and
// practices are linted by `npm run lint:containers`.)
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../src/config.ts';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const read = (file: string) => readFileSync(`${root}${file}`, 'utf8');

describe('container files', () => {
  it('the Dockerfile runs the real binary as a non-root user, healthy on /readyz, data on a volume', () => {
    const dockerfile = read('Dockerfile');
    // The compiled server (npm run build, in the image's build stage): the JavaScript of a real source.
    const cmd = /^CMD \["node", "([^"]+)", "serve"\]$/m.exec(dockerfile)?.[1] ?? '';
    expect(cmd).toMatch(/^packages\/server\/dist\/.+\.js$/);
    expect(existsSync(`${root}${cmd.replace('/dist/', '/src/').replace(/\.js$/, '.ts')}`)).toBe(true);
    expect(dockerfile).toMatch(/^RUN npm run build$/m);
    expect(dockerfile).toMatch(/^COPY --from=build \/app\/packages\/server\/dist packages\/server\/dist$/m);
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/HEALTHCHECK[\s\S]*\/readyz/);
    expect(dockerfile).toMatch(/TESSERA_DATA_DIR=\/data/);
    expect(dockerfile).toMatch(/^VOLUME \["\/data"\]$/m);
    expect(dockerfile).toMatch(/^FROM node:20\.\d+-bookworm-slim/m);
    // `npm ci --omit=dev` must leave what serve runs on (tsx stays for a checkout's `npx tessera`).
    const server = JSON.parse(read('packages/server/package.json')) as {
      dependencies: Record<string, string>;
    };
    expect(Object.keys(server.dependencies)).toEqual(expect.arrayContaining(['tsx', 'commander', 'fastify']));
  });

  it('compose.yaml sets only configuration the server reads, and a Postgres 17 DATABASE_URL', () => {
    const compose = read('compose.yaml');
    expect(compose).toMatch(/image: postgres:17\b/);
    const tessera = compose.slice(compose.indexOf('  tessera:'));
    const environment = tessera.slice(tessera.indexOf('environment:'), tessera.indexOf('\n    ports:'));
    const keys = [...environment.matchAll(/^ {6}([A-Z_]+):/gm)].map((m) => m[1]);
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) expect(Object.keys(ConfigSchema.shape), key).toContain(key);
    const env = Object.fromEntries(
      [...environment.matchAll(/^ {6}([A-Z_]+): (.+)$/gm)].map((m) => [m[1], m[2]]),
    );
    expect(() => ConfigSchema.parse(env)).not.toThrow();
    expect(env.DATABASE_URL).toMatch(/^postgres:\/\/tessera:tessera@postgres:5432\/tessera$/);
  });
});
