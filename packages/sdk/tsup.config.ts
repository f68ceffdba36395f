// The published package: ESM and CommonJS builds of src/index.ts with their type declarations, for
// Node 20 and later.
import { defineConfig } from 'tsup';

// biome-ignore lint/style/noDefaultExport: tsup reads the default export
export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  target: 'node20',
  platform: 'node',
  sourcemap: true,
  // openapi-fetch's CommonJS build has a default export without the ES-module marker, which a CommonJS
  // consumer cannot call through interop: its (small) code is bundled; its types stay a dependency.
  noExternal: ['openapi-fetch'],
});
