// A report answered as a CSV download (docs/payouts.md, Reports).
import type { FastifyReply } from 'fastify';

export function sendCsv(reply: FastifyReply, fileName: string, csv: string) {
  return reply
    .type('text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${fileName}"`)
    .send(csv);
}
