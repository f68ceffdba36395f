// The boundaries the code is built on, held by reading the sources: the three APIs never import each
// other, and nothing above rails/ names a simulator (rails/rails.ts chooses the adapters; the sandbox
// reaches the simulators through rails/sandbox.ts).
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const src = fileURLToPath(new URL('../../src/', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** The code without its comments (a comment may well speak of the simulator). */
function code(file: string): string {
  return readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

const files = sources(src).map((path) => ({ path: relative(src, path), code: code(path) }));

describe('module boundaries', () => {
  it('no module above rails/ names a simulator class or imports a simulator module', () => {
    const offenders = files
      .filter((f) => !f.path.startsWith('rails/'))
      .filter((f) =>
        /\b\w+Simulator\b|\bSandboxNotifier\b|-simulator\.ts'|sandbox-notifier\.ts'/.test(f.code),
      )
      .map((f) => f.path);
    expect(offenders).toEqual([]);
  });

  it('the three APIs never import each other', () => {
    const apis = ['issuing', 'payments', 'crypto'];
    const offenders = files.flatMap((f) => {
      const api = apis.find((a) => f.path.startsWith(`${a}/`));
      if (!api) return [];
      const imports = [...f.code.matchAll(/from '([^']+)'/g)].map((m) => m[1] ?? '');
      return imports
        .filter((spec) =>
          apis.some((other) => other !== api && new RegExp(`^(\\.\\./)+${other}/`).test(spec)),
        )
        .map((spec) => `${f.path} → ${spec}`);
    });
    expect(offenders).toEqual([]);
  });

  it('finds what it looks for (the checks are not vacuous)', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(files.some((f) => f.path === 'rails/rails.ts' && /CardNetworkSimulator/.test(f.code))).toBe(true);
    expect(files.some((f) => f.path.startsWith('payments/') && /from '\.\.\/platform\//.test(f.code))).toBe(
      true,
    );
  });
});
