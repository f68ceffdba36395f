#!/usr/bin/env node
// `npm run build`: the server as plain JavaScript in packages/server/dist, for production images (the
// Dockerfile runs `node packages/server/dist/main.js`, no TypeScript at run time). A checkout keeps running
// its sources through tsx (`npm start`, `npx tessera`). dist mirrors src, so every path the code finds
// relative to itself (its assets here, the migrations and docs beside src) resolves the same from dist.
import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const server = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(server, 'src');
const dist = join(server, 'dist');

rmSync(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', join(server, 'tsconfig.build.json')], { stdio: 'inherit' });

// What the code reads beside itself at run time: stylesheets and scripts of the pages (not the folders'
// READMEs, which are for their readers).
let copied = 0;
const copyAssets = (dir) => {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) copyAssets(path);
    else if (!name.endsWith('.ts') && !name.endsWith('.md')) {
      cpSync(path, join(dist, relative(src, path)));
      copied++;
    }
  }
};
copyAssets(src);
process.stdout.write(`built packages/server/dist (${copied} assets copied)\n`);
