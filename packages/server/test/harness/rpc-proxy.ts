// A JSON-RPC proxy in front of a node (anvil), for tests of what a real network does to Tessera: a node
// that lies about its head, a broadcast that never answers. Each call goes through `handle`, which by
// default forwards it unchanged.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RpcCall {
  id: number;
  method: string;
  params?: unknown[];
}

export interface RpcAnswer {
  id: number;
  jsonrpc: string;
  result?: unknown;
  error?: unknown;
}

export interface RpcProxy {
  url: string;
  /** Each call: `forward` sends it on to the node. A promise that never settles is a node that hangs. */
  handle: (call: RpcCall, forward: () => Promise<RpcAnswer>) => Promise<RpcAnswer>;
  /** Every call the proxy received, in order */
  calls: RpcCall[];
  close(): void;
}

export async function rpcProxy(target: string): Promise<RpcProxy> {
  const forwardTo = async (body: string) =>
    (await (
      await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
    ).json()) as RpcAnswer;
  const server = createServer(async (request, response) => {
    let body = '';
    for await (const chunk of request) body += String(chunk);
    const call = JSON.parse(body) as RpcCall;
    proxy.calls.push(call);
    const answer = await proxy.handle(call, () => forwardTo(body));
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify(answer));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const proxy: RpcProxy = {
    url: `http://127.0.0.1:${port}`,
    handle: (_call, forward) => forward(),
    calls: [],
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
  return proxy;
}

/** A call that never answers (the connection stays open until the proxy closes). */
export const never = (): Promise<RpcAnswer> => new Promise(() => {});
