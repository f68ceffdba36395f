// How the CLI's client commands (`events`, `redeliver`, `listen`) reach a running Tessera: its URL
// (`--server`, else TESSERA_PUBLIC_URL, else the server the data directory says is running, else this
// machine's PORT) and the operator's admin token
// (`--admin-token`, else TESSERA_ADMIN_TOKEN, else the sandbox's data directory, where `tessera serve`
// keeps the token it generated).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import type { Config } from '../config.ts';
import { runningServerUrl } from './running-server.ts';

export interface ServerConnection {
  url: string;
  adminToken: string;
}

/** The options a command that speaks to the running server takes */
export interface ConnectionOptions {
  server?: string;
  adminToken?: string;
}

/** Adds --server and --admin-token to a command that speaks to the running server */
export function withConnection(command: Command): Command {
  return command
    .option('--server <url>', 'the running Tessera (default: TESSERA_PUBLIC_URL, else this machine’s PORT)')
    .option(
      '--admin-token <token>',
      'the operator’s token (default: TESSERA_ADMIN_TOKEN, else the sandbox’s data directory)',
    );
}

/** A failure the CLI reports in one line, with what to do about it. */
export class CliError extends Error {}

export async function connect(
  config: Config,
  options: { server?: string; adminToken?: string },
): Promise<ServerConnection> {
  const url = (
    options.server ??
    (process.env.TESSERA_PUBLIC_URL ? config.publicUrl : await runningServerUrl(config.dataDir)) ??
    config.publicUrl
  ).replace(/\/$/, '');
  const adminToken = options.adminToken ?? config.adminToken ?? (await sandboxToken(config.dataDir));
  if (!adminToken) {
    throw new CliError(
      `no admin token: pass --admin-token, set TESSERA_ADMIN_TOKEN, or run where the sandbox's data directory (${config.dataDir}) is`,
    );
  }
  return { url, adminToken };
}

async function sandboxToken(dataDir: string): Promise<string | undefined> {
  try {
    const secrets = JSON.parse(await readFile(join(dataDir, 'secrets.json'), 'utf8')) as {
      adminToken?: string;
    };
    return secrets.adminToken;
  } catch {
    return undefined;
  }
}

/** One admin API call; a refusal or an unreachable server is a CliError saying so. */
export const adminRequest = <T>(
  connection: ServerConnection,
  method: 'GET' | 'POST' | 'PUT',
  path: string,
  body?: unknown,
) => operatorRequest<T>(connection, method, `/admin${path}`, body);

/** One sandbox API call (sandbox mode only). */
export const sandboxRequest = <T>(
  connection: ServerConnection,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
) => operatorRequest<T>(connection, method, `/sandbox${path}`, body);

/** A request body sent as it is, with its media type (a list file), not as JSON */
class RawBody {
  constructor(
    /** A document as it is, or the parts of a multipart/form-data body (fetch writes its boundary) */
    readonly text: string | FormData,
    readonly contentType: string | undefined,
  ) {}
}

/** One admin API call whose body is a document (a list file), sent as it is with its media type. */
export const adminUpload = async <T>(
  connection: ServerConnection,
  path: string,
  document: { text: string; contentType: string } | { form: FormData },
): Promise<T> =>
  JSON.parse(
    await operatorFetch(
      connection,
      'POST',
      `/admin${path}`,
      'form' in document
        ? new RawBody(document.form, undefined)
        : new RawBody(document.text, document.contentType),
    ),
  ) as T;

/** One admin API call whose answer is a text document (a CSV report), answered as it came. */
export const adminText = (connection: ServerConnection, path: string) =>
  operatorFetch(connection, 'GET', `/admin${path}`);

async function operatorRequest<T>(
  connection: ServerConnection,
  method: 'GET' | 'POST' | 'PUT',
  path: string,
  body?: unknown,
): Promise<T> {
  return JSON.parse(await operatorFetch(connection, method, path, body)) as T;
}

async function operatorFetch(
  connection: ServerConnection,
  method: 'GET' | 'POST' | 'PUT',
  path: string,
  body?: unknown,
): Promise<string> {
  const sent =
    body === undefined
      ? undefined
      : body instanceof RawBody
        ? body
        : { text: JSON.stringify(body), contentType: 'application/json' };
  let response: Response;
  try {
    response = await fetch(`${connection.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${connection.adminToken}`,
        ...(sent?.contentType ? { 'content-type': sent.contentType } : {}),
      },
      ...(sent ? { body: sent.text } : {}),
    });
  } catch (err) {
    throw new CliError(
      `cannot reach Tessera at ${connection.url} (${(err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message}): is it running? (--server URL)`,
    );
  }
  const text = await response.text();
  if (!response.ok) {
    let message = text;
    try {
      message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? text;
    } catch {}
    throw new CliError(`${method} ${path} answered ${response.status}: ${message}`);
  }
  return text;
}
