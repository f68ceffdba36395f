// The quick starts (docs/quickstart-*.md) as a newcomer runs them: every fenced `sh` block of a page, in
// order, in one bash process against a fresh sandbox, with only TESSERA and ADMIN_TOKEN given (the
// pages' first block reads them). A request that fails fails the block (`curl -f`, `set -e`). Where a
// page shows an answer (the `json` block after a command), the command's last printed JSON must have
// every member the page shows, of the same type, so the pages cannot drift from the API.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness } from '../harness/harness.ts';

const run = promisify(execFile);
const DOCS = new URL('../../../../docs/', import.meta.url);
const PAGES = ['quickstart-payments.md', 'quickstart-crypto.md', 'quickstart-issuing.md'];

interface Block {
  shell: string;
  /** The answer the page shows after this command, if any */
  answer?: unknown;
}

/** The page's `sh` blocks, each with the `json` block that follows it before the next command. */
export function blocksOf(markdown: string): Block[] {
  const blocks: Block[] = [];
  for (const match of markdown.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)) {
    const [, language, body = ''] = match;
    if (language === 'sh') blocks.push({ shell: body });
    else if (language === 'json' && blocks.length > 0) {
      const last = blocks[blocks.length - 1] as Block;
      if (last.answer === undefined) last.answer = JSON.parse(body.replace(/…/g, ''));
    }
  }
  return blocks;
}

/** The last complete JSON value a block printed (jq prints one per line or pretty-printed). */
function lastJson(output: string): unknown {
  const text = output.trim();
  for (let start = text.length - 1; start >= 0; start--) {
    if (text[start] !== '{' && text[start] !== '[') continue;
    if (start > 0 && text[start - 1] !== '\n') continue;
    try {
      return JSON.parse(text.slice(start));
    } catch {}
  }
  throw new Error(`no JSON in the output:\n${output}`);
}

/** Where the shown answer has a member the real one lacks, or of another type: its path. */
function differences(shown: unknown, real: unknown, path = '$'): string[] {
  if (shown === null) return [];
  if (real === null || real === undefined) return [`${path}: null in the answer`];
  if (Array.isArray(shown)) {
    if (!Array.isArray(real)) return [`${path}: an array is shown, the answer has ${typeof real}`];
    if (shown.length > 0 && real.length === 0) return [`${path}: the answer's array is empty`];
    return shown.length > 0 ? differences(shown[0], real[0], `${path}[0]`) : [];
  }
  if (typeof shown === 'object') {
    if (typeof real !== 'object' || Array.isArray(real)) return [`${path}: an object is shown`];
    return Object.entries(shown as Record<string, unknown>).flatMap(([key, value]) =>
      key in (real as Record<string, unknown>)
        ? differences(value, (real as Record<string, unknown>)[key], `${path}.${key}`)
        : [`${path}.${key}: not in the answer`],
    );
  }
  return typeof shown === typeof real ? [] : [`${path}: ${typeof shown} shown, ${typeof real} answered`];
}

let h: Harness;
let cwd: string;
beforeAll(async () => {
  await run('bash', ['-c', 'command -v curl && command -v jq']).catch(() => {
    throw new Error('the quick starts need curl and jq (apt-get install curl jq)');
  });
  cwd = await mkdtemp(join(tmpdir(), 'quickstart-'));
});
afterAll(async () => {
  await rm(cwd, { recursive: true, force: true });
});

describe.each(PAGES)('%s', (page) => {
  beforeAll(async () => {
    h = await Harness.start();
  });
  afterAll(async () => {
    await h.close();
  });

  it('runs as written against a fresh sandbox, and answers what it shows', { timeout: 120_000 }, async () => {
    const blocks = blocksOf(await readFile(new URL(page, DOCS), 'utf8'));
    expect(blocks.length).toBeGreaterThan(3);
    const script = [
      'set -euo pipefail',
      `source '${fileURLToPath(new URL('curl-showing-errors.sh', import.meta.url))}'`,
      ...blocks.map((b, i) => `echo "@@block ${i}@@"\n${b.shell}`),
    ].join('\n');
    const result = await run('bash', ['-c', script], {
      cwd,
      env: { PATH: process.env.PATH ?? '', HOME: cwd, TESSERA: h.baseUrl, ADMIN_TOKEN: h.adminToken },
      timeout: 100_000,
      maxBuffer: 16 * 1024 * 1024,
    }).catch((err: { stdout?: string; stderr?: string; message: string }) => {
      const failedAt = [...(err.stdout ?? '').matchAll(/@@block (\d+)@@/g)].pop()?.[1] ?? '0';
      throw new Error(
        `block ${failedAt} of ${page} failed:\n${blocks[Number(failedAt)]?.shell}\n${err.stderr ?? err.message}`,
      );
    });
    const outputs = result.stdout.split(/^@@block \d+@@$/m).slice(1);
    expect(outputs).toHaveLength(blocks.length);
    blocks.forEach((block, i) => {
      if (block.answer === undefined) return;
      const real = lastJson(outputs[i] ?? '');
      expect(
        differences(block.answer, real),
        `block ${i}:\n${block.shell}\nanswered ${JSON.stringify(real)}`,
      ).toEqual([]);
    });
  });
});
