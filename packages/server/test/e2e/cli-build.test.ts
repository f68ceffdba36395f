// `tessera` runs the sources compiled by esbuild (scripts/run-build.mjs), never a stale build: here on a
// copy of the package (so the suite's own build is left alone), a first run builds, a second one reuses
// the build, and a changed source is built again before the next command runs it.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const server = join(import.meta.dirname, '../..');
let root: string;
let copy: string;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'tessera-cli-build-'));
  copy = join(root, 'packages', 'server');
  for (const part of ['bin', 'scripts', 'src', 'package.json']) {
    cpSync(join(server, part), join(copy, part), { recursive: true });
  }
  symlinkSync(join(server, '../../node_modules'), join(root, 'node_modules'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const tessera = (...args: string[]) =>
  execFileSync(process.execPath, [join(copy, 'bin', 'tessera.mjs'), ...args], { encoding: 'utf8' });
const stamp = () => readFileSync(join(copy, '.cli-build', '.stamp'), 'utf8');

describe('the command line’s build', () => {
  it('builds on the first run, reuses the build, and builds again when a source changes', () => {
    expect(tessera('--version').trim()).toBe(
      (JSON.parse(readFileSync(join(server, 'package.json'), 'utf8')) as { version: string }).version,
    );
    const first = stamp();
    const built = statSync(join(copy, '.cli-build', 'main.js')).mtimeMs;
    tessera('--version');
    expect(stamp()).toBe(first);
    expect(statSync(join(copy, '.cli-build', 'main.js')).mtimeMs).toBe(built);

    const program = join(copy, 'src', 'cli', 'program.ts');
    writeFileSync(
      program,
      readFileSync(program, 'utf8').replace(
        'Self-hostable payments platform:',
        'Self-hostable payments platform (changed):',
      ),
    );
    expect(tessera('--help')).toContain('Self-hostable payments platform (changed):');
    expect(stamp()).not.toBe(first);
  });
});
