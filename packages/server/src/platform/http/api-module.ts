// What an API hands the composition root (server.ts): one module that builds its services from the
// platform it is given (registering its sweeps), mounts itself under its base path, registers its
// hosted pages and its pages in the console. The root builds each module once and mounts them all
// alike; adding an API adds one line.
import type { FastifyInstance } from 'fastify';
import type { ConsoleContext } from '../console/route-kit.ts';
import type { ApiScopeOptions } from './api-scope.ts';

/** An API as mountApi takes it, less what the root adds to every API (idempotency, the document list) */
export type ApiScope = Omit<ApiScopeOptions, 'onDocument' | 'idempotency'>;

// Function-typed members (not methods): a module whose platform asks for more than the root's platform
// has is then a type error at the root, not a crash at start.
export interface ApiModule<Platform, Services> {
  readonly name: string;
  /** Builds the API's services (and registers their sweeps) on the platform */
  build: (platform: Platform) => Services;
  /** The API under its base path */
  api: (platform: Platform, services: Services) => ApiScope;
  /** Its hosted pages, outside the base path (the pages its customers see) */
  registerPages: (app: FastifyInstance, platform: Platform, services: Services) => Promise<void>;
  /** Its pages in the console (inside the console's signed-in scope, with its kit: platform/console) */
  registerConsole: (
    app: FastifyInstance,
    console: ConsoleContext,
    platform: Platform,
    services: Services,
  ) => Promise<void>;
}

/** A built module, its types closed over, as the root mounts it */
export interface BuiltModule {
  readonly name: string;
  api(): ApiScope;
  registerPages(app: FastifyInstance): Promise<void>;
  registerConsole(app: FastifyInstance, console: ConsoleContext): Promise<void>;
}

export function built<Platform, Services>(
  module: ApiModule<Platform, Services>,
  platform: Platform,
  services: Services,
): BuiltModule {
  return {
    name: module.name,
    api: () => module.api(platform, services),
    registerPages: (app) => module.registerPages(app, platform, services),
    registerConsole: (app, console) => module.registerConsole(app, console, platform, services),
  };
}
