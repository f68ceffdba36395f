// The configuration's refusal, naming each setting that is wrong (config.ts). Its own module: the CLI
// answers it without loading the configuration's schema.
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}
