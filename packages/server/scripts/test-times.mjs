#!/usr/bin/env node
// `npm run test:times [FILE…]`: the files the file-times reporter wrote during runs (default: every
// test-results/file-times-*.json, one per suite) as the Markdown tables docs/testing.md keeps: the ten
// slowest files, then every file by path.
import { readdirSync, readFileSync } from 'node:fs';

const given = process.argv.slice(2);
const written = () =>
  readdirSync('test-results')
    .filter((name) => /^file-times-.+\.json$/.test(name))
    .map((name) => `test-results/${name}`);
const times = (given.length > 0 ? given : written()).flatMap((path) =>
  JSON.parse(readFileSync(path, 'utf8')),
);
const seconds = (ms) => (ms / 1000).toFixed(1);
const total = (t) => t.collectMs + t.runMs;
const row = (t) =>
  `| \`${t.file.replace(/^packages\/server\//, '')}\` | ${t.project} | ${t.tests} | ${seconds(t.collectMs)} | ${seconds(t.runMs)} | ${seconds(total(t))} |`;
const head = '| File | Project | Tests | Import s | Tests and hooks s | Total s |\n|---|---|--:|--:|--:|--:|';
console.log(
  `${times.length} file runs, ${seconds(times.reduce((sum, t) => sum + total(t), 0))} s of worker time\n`,
);
console.log('### The ten slowest\n');
console.log(head);
for (const t of [...times].sort((a, b) => total(b) - total(a)).slice(0, 10)) console.log(row(t));
console.log('\n### Every file\n');
console.log(head);
const byPath = (a, b) => a.file.localeCompare(b.file) || a.project.localeCompare(b.project);
for (const t of [...times].sort(byPath)) console.log(row(t));
