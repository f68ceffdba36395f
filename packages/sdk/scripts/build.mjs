// Builds the published package: ESM (dist/index.js) and CommonJS (dist/index.cjs) bundles of src/index.ts
// for Node 20, with esbuild, and the type declarations (dist/types) with tsc. openapi-fetch's code is
// bundled: its CommonJS build has a default export without the ES-module marker, which CommonJS interop
// cannot call; its types stay a dependency. jose stays external.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
rmSync(`${root}dist`, { recursive: true, force: true });
const common = {
  entryPoints: [`${root}src/index.ts`],
  bundle: true,
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  external: ['jose'],
  logLevel: 'warning',
};
await build({ ...common, format: 'esm', outfile: `${root}dist/index.js` });
await build({ ...common, format: 'cjs', outfile: `${root}dist/index.cjs` });
execFileSync(
  process.execPath,
  [fileURLToPath(import.meta.resolve('typescript/bin/tsc')), '-p', `${root}tsconfig.build.json`],
  {
    stdio: 'inherit',
  },
);

// Declarations name their siblings as the sources do (`./x.ts`); published, they are `./x.js`.
for (const file of readdirSync(`${root}dist/types`, { recursive: true })) {
  if (!String(file).endsWith('.d.ts')) continue;
  const path = `${root}dist/types/${file}`;
  writeFileSync(path, readFileSync(path, 'utf8').replace(/(from '\.{1,2}\/[^']+)\.ts'/g, "$1.js'"));
}
