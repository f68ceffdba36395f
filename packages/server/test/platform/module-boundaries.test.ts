// The boundaries the code is built on, held by reading the sources (docs/architecture.md, Layers and
// rooms): no import circle, no import from a lower layer back up to a higher one, the three APIs never
// import each other, nothing but the CLI imports the composition root, no source file past the length we
// split at, nothing above rails/ names a simulator (rails/rails.ts chooses the adapters; the sandbox
// reaches the simulators through rails/sandbox.ts), and the wire is parsed only at the edges.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
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

/** Each room of src/ and its layer: a module may import its own layer or one below, never one above. */
const LAYERS: Record<string, number> = {
  platform: 0,
  'version.ts': 0,
  'config-error.ts': 0,
  rails: 1,
  issuing: 2,
  payments: 2,
  crypto: 2,
  'config.ts': 3,
  'boot.ts': 3,
  admin: 4,
  sandbox: 4,
  pages: 4,
  'platform-services.ts': 4,
  app: 5,
  'server.ts': 5,
  cli: 6,
  'main.ts': 6,
};
const APIS = new Set(['issuing', 'payments', 'crypto']);

/** Lines a source file may have; the table types (schema.ts) are one list and exempt. */
const MAX_LINES = 450;
const LONG_EXEMPT = new Set(['platform/db/schema.ts']);

/** Every file's relative imports (type-only ones too: a circle of types is still a circle), by path. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sources(src)) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = importedFiles
      .filter((i) => i.fileName.startsWith('.'))
      .map((i) => relative(src, resolve(dirname(file), i.fileName)));
    graph.set(relative(src, file), targets);
  }
  return graph;
}

const roomOf = (path: string) => path.split('/')[0] as string;

/** The strongly connected components of more than one file (Tarjan). */
function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/**
 * The wire's parsers (an amount's text, a client's JSON, a card number and its expiry) and the folders
 * that may call them: an API's http/, hosted pages/ and console/ pages, the console's own rooms, the
 * sandbox, the CLI and the rails (an adapter reads its provider's files, a bank statement's amounts).
 * Everywhere else takes the typed command those edges build (docs/architecture.md, Parse once, at the edge).
 */
const WIRE_PARSERS =
  /\b(parseAmountField|parseAmount|parseClientJson|isLuhnValid|parseCardExpiry)\(|ClientAmount\.read\(/;
const WIRE_DEFINITIONS = new Set([
  'platform/money/amount.ts',
  'platform/http/client-json.ts',
  'platform/cards/card-number.ts',
]);
const isEdge = (path: string) =>
  /(^|\/)(http|pages|cli)\//.test(path) || // admin/cli/ and the console's own rooms (pages/console/) too
  /^(issuing|payments|crypto)\/console\//.test(path) || // not platform/console/: the kit parses nothing
  ['sandbox', 'rails'].includes(roomOf(path));

const files = sources(src).map((path) => ({ path: relative(src, path), code: code(path) }));

describe('module boundaries', () => {
  const graph = importGraph();

  it('no module above rails/ names a simulator class or imports a simulator module', () => {
    const offenders = files
      .filter((f) => !f.path.startsWith('rails/'))
      .filter((f) =>
        /\b\w+Simulator\b|\bSandboxNotifier\b|-simulator\.ts'|sandbox-notifier\.ts'/.test(f.code),
      )
      .map((f) => f.path);
    expect(offenders).toEqual([]);
  });

  it('places every room of src/ in a layer', () => {
    const unplaced = [...new Set([...graph.keys()].map(roomOf))].filter((room) => !(room in LAYERS));
    expect(unplaced).toEqual([]);
  });

  it('has no import circle', () => {
    expect(circles(graph)).toEqual([]);
  });

  it('never imports a higher layer, and the three APIs never import each other', () => {
    const wrong: string[] = [];
    for (const [from, targets] of graph) {
      for (const to of targets) {
        const a = roomOf(from);
        const b = roomOf(to);
        if (a === b) continue;
        const up = (LAYERS[b] ?? 99) > (LAYERS[a] ?? 99);
        if (up || (APIS.has(a) && APIS.has(b))) wrong.push(`${from} -> ${to}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('lets only the CLI import the composition root', () => {
    const importers = [...graph]
      .filter(([, targets]) => targets.includes('server.ts'))
      .map(([from]) => from)
      .filter((from) => roomOf(from) !== 'cli');
    expect(importers).toEqual([]);
  });

  it(`keeps source files under ${MAX_LINES} lines`, () => {
    const long: string[] = [];
    for (const file of graph.keys()) {
      if (LONG_EXEMPT.has(file)) continue;
      const lines = readFileSync(join(src, file), 'utf8').split('\n').length;
      if (lines > MAX_LINES) long.push(`${file} (${lines})`);
    }
    expect(long, 'split these by phase or capability').toEqual([]);
  });

  it('parses the wire only at the edges', () => {
    const inside = files
      .filter((f) => !isEdge(f.path) && !WIRE_DEFINITIONS.has(f.path))
      .filter((f) => WIRE_PARSERS.test(f.code))
      .map((f) => f.path);
    expect(inside, 'build a typed command at the edge and pass it in').toEqual([]);
  });

  it('finds what it looks for (the checks are not vacuous)', () => {
    expect(files.filter((f) => isEdge(f.path) && WIRE_PARSERS.test(f.code)).length).toBeGreaterThan(10);
    expect(files.length).toBeGreaterThan(100);
    expect(files.some((f) => f.path === 'rails/rails.ts' && /CardNetworkSimulator/.test(f.code))).toBe(true);
    expect(files.some((f) => f.path.startsWith('payments/') && /from '\.\.\/platform\//.test(f.code))).toBe(
      true,
    );
  });
});
