// What `tessera` (bin/tessera.mjs) runs: the sources compiled to JavaScript by esbuild into .cli-build,
// a sibling of src, so every path the code finds relative to itself (its assets, the migrations and docs
// beside src, package.json) resolves the same. The build is stamped with every source file's path, size
// and modification time; a run whose sources differ from the stamp builds again first (about a second),
// so it is never stale. Type-checking is `npm run typecheck`'s: esbuild only strips types, file by file.
// The production image runs `npm run build` (tsc, packages/server/dist) instead.
import { createHash } from 'node:crypto';
import {
  cpSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const server = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(server, 'src');
export const BUILD_DIR = join(server, '.cli-build');
const STAMP = '.stamp';

/** Every source file (tests left out): the stamp's input and the build's. */
function sources() {
  return readdirSync(src, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && !entry.name.endsWith('.test.ts'))
    .map((entry) => join(entry.parentPath ?? entry.path, entry.name))
    .sort();
}

function stampOf(files) {
  const hash = createHash('sha256');
  for (const file of [...files, join(server, 'package.json'), fileURLToPath(import.meta.url)]) {
    const { size, mtimeMs } = statSync(file);
    hash.update(`${relative(server, file)}\0${size}\0${mtimeMs}\n`);
  }
  return hash.digest('hex');
}

/** The entry point to import: the build, made again first when a source changed; undefined without esbuild. */
export async function freshBuild() {
  const files = sources();
  const stamp = stampOf(files);
  if (readStamp() !== stamp) {
    let esbuild;
    try {
      esbuild = await import('esbuild');
    } catch {
      return undefined;
    }
    // One build at a time: commands started together (a test run's) wait for the first one's build and
    // use it, rather than swapping theirs in under a process that is loading its files.
    await withBuildLock(async () => {
      if (readStamp() !== stamp) await build(esbuild, files, stamp);
    });
  }
  return join(BUILD_DIR, 'main.js');
}

function readStamp() {
  try {
    return readFileSync(join(BUILD_DIR, STAMP), 'utf8');
  } catch {
    return undefined;
  }
}

async function withBuildLock(work) {
  const lock = `${BUILD_DIR}.lock`;
  const started = Date.now();
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      // A lock left by a build that died (a minute is twenty builds) is taken over.
      const age = Date.now() - statSync(lock, { throwIfNoEntry: false })?.mtimeMs;
      if (age > 60_000 || Date.now() - started > 120_000) {
        rmSync(lock, { recursive: true, force: true });
        continue;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  try {
    await work();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

async function build(esbuild, files, stamp) {
  // Built beside, then swapped in: two commands building at once each finish, and a process running
  // from the old build keeps the files it loaded.
  const temporary = `${BUILD_DIR}-${process.pid}`;
  rmSync(temporary, { recursive: true, force: true });
  const scripts = files.filter((file) => file.endsWith('.ts'));
  await esbuild
    .build({
      entryPoints: scripts,
      outdir: temporary,
      outbase: src,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      bundle: false,
      sourcemap: 'linked',
      logLevel: 'error',
      write: false,
    })
    .then(({ outputFiles }) => {
      for (const file of outputFiles) {
        mkdirSync(dirname(file.path), { recursive: true });
        // The sources import each other by their .ts names (TypeScript's rewriteRelativeImportExtensions).
        const text = file.path.endsWith('.js')
          ? file.text.replace(/((?:\bfrom|\bimport)\s*\(?\s*)(['"])(\.{1,2}\/[^'"]+?)\.ts\2/g, '$1$2$3.js$2')
          : file.text;
        writeFileSync(file.path, text);
      }
    });
  for (const file of files.filter((f) => !f.endsWith('.ts'))) {
    const to = join(temporary, relative(src, file));
    mkdirSync(dirname(to), { recursive: true });
    cpSync(file, to);
  }
  writeFileSync(join(temporary, STAMP), stamp);
  const old = `${BUILD_DIR}-old-${process.pid}`;
  try {
    renameSync(BUILD_DIR, old);
  } catch {
    // none yet
  }
  try {
    renameSync(temporary, BUILD_DIR);
  } catch {
    // Another command swapped its build in first: the same sources, so use that one.
    rmSync(temporary, { recursive: true, force: true });
  }
  rmSync(old, { recursive: true, force: true });
}
