#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx, so `npm start` and `npx tessera` need no build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
