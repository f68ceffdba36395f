// A report answered as a CSV download (docs/payouts.md, Reports): whole, or streamed as its lines are read
// (a payout of a large backlog lists hundreds of thousands).
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';

export function sendCsv(reply: FastifyReply, fileName: string, csv: string | AsyncIterable<string>) {
  return reply
    .type('text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${fileName}"`)
    .send(typeof csv === 'string' ? csv : Readable.from(csv));
}
