// A vitest reporter that writes each test file's time to test-results/file-times-<project>.json (one file
// per suite run, so CI's suites do not overwrite each other's): its import (collect), its tests and hooks,
// per project. `npm run test:times` prints them all as the tables docs/testing.md keeps (the ten slowest,
// and every file).
import { mkdirSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

export interface FileTime {
  file: string;
  project: string;
  tests: number;
  /** Importing the file and what it imports, in ms */
  collectMs: number;
  /** Its tests and hooks, in ms */
  runMs: number;
}

// biome-ignore lint/style/noDefaultExport: vitest loads a custom reporter by its module's default export
export default class FileTimesReporter implements Reporter {
  private readonly times: FileTime[] = [];

  onTestModuleEnd(module: TestModule): void {
    const d = module.diagnostic();
    this.times.push({
      file: relative(process.cwd(), module.moduleId),
      project: module.project.name,
      tests: [...module.children.allTests()].length,
      collectMs: Math.round(d.collectDuration + d.setupDuration + d.prepareDuration),
      runMs: Math.round(d.duration),
    });
  }

  onTestRunEnd(): void {
    mkdirSync('test-results', { recursive: true });
    const sorted = this.times.sort((a, b) => b.collectMs + b.runMs - (a.collectMs + a.runMs));
    const projects = [...new Set(sorted.map((t) => t.project))].sort().join('+') || 'none';
    writeFileSync(`test-results/file-times-${projects}.json`, `${JSON.stringify(sorted, null, 1)}\n`);
  }
}
