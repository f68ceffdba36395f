#!/usr/bin/env node
// `npm run test:times`: test-results/file-times.json (written by the file-times reporter during a run) as
// the Markdown tables docs/testing.md keeps: the ten slowest files, then every file by folder.
import { readFileSync } from 'node:fs';

const times = JSON.parse(readFileSync(process.argv[2] ?? 'test-results/file-times.json', 'utf8'));
const seconds = (ms) => (ms / 1000).toFixed(1);
const row = (t) =>
  `| \`${t.file.replace(/^packages\/server\//, '')}\` | ${t.project} | ${t.tests} | ${seconds(t.collectMs)} | ${seconds(t.runMs)} | ${seconds(t.collectMs + t.runMs)} |`;
const head = '| File | Project | Tests | Import s | Tests and hooks s | Total s |\n|---|---|--:|--:|--:|--:|';
const total = times.reduce((sum, t) => sum + t.collectMs + t.runMs, 0);
console.log(`${times.length} file runs, ${seconds(total)} s of worker time\n`);
console.log('### The ten slowest\n');
console.log(head);
for (const t of times.slice(0, 10)) console.log(row(t));
console.log('\n### Every file\n');
console.log(head);
for (const t of [...times].sort(
  (a, b) => a.file.localeCompare(b.file) || a.project.localeCompare(b.project),
)) {
  console.log(row(t));
}
