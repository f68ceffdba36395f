// The sandbox's inbox stands in for a person's mailbox: the codes Tessera sends them.
import type { Harness } from './harness.ts';

/** The 6-digit code last sent to an address. */
export async function latestCode(h: Harness, recipient: string): Promise<string> {
  const res = await h.request<{ data: { body: string }[] }>(
    'GET',
    `/sandbox/messages?recipient=${encodeURIComponent(recipient)}&limit=1`,
    { headers: { authorization: `Bearer ${h.adminToken}` } },
  );
  const code = /\b(\d{6})\b/.exec(res.body.data[0]?.body ?? '')?.[1];
  if (!code) throw new Error(`no code sent to ${recipient}`);
  return code;
}
