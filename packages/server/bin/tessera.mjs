#!/usr/bin/env node
// `tessera`: runs the sources as JavaScript compiled by esbuild (scripts/run-build.mjs), built again
// first whenever a source changed, so `npm start` and `npx tessera` need no build step and never run a
// stale build. Where esbuild is not installed (an install without dev dependencies) the sources run
// through tsx instead, slower to start.
import { pathToFileURL } from 'node:url';
import { freshBuild } from '../scripts/run-build.mjs';

const entry = await freshBuild();
if (entry) await import(pathToFileURL(entry).href);
else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/main.ts');
}
