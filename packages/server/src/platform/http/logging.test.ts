// Log lines (logging.ts): JSON for a collector, one readable line on a terminal (TESSERA_LOG_FORMAT).
import { Writable } from 'node:stream';
import { stripVTControlCharacters } from 'node:util';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { logDestination, loggerOptions } from './logging.ts';

function capture(isTTY: boolean) {
  const lines: string[] = [];
  const stream = Object.assign(
    new Writable({
      write(chunk, _encoding, done) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        done();
      },
    }),
    { isTTY },
  );
  return { lines, stream: stream as unknown as NodeJS.WriteStream };
}

describe('log lines', () => {
  it('are JSON when stdout is not a terminal, and one readable line each on a terminal', () => {
    const piped = capture(false);
    pino(loggerOptions('info'), logDestination('auto', piped.stream)).info({ deliveryId: 'dlv_1' }, 'sent');
    expect(JSON.parse(piped.lines[0] ?? '{}')).toMatchObject({ level: 30, msg: 'sent', deliveryId: 'dlv_1' });

    const terminal = capture(true);
    pino(loggerOptions('info'), logDestination('auto', terminal.stream)).warn(
      { deliveryId: 'dlv_2', nested: { a: 1 } },
      'webhook attempt failed',
    );
    expect(terminal.lines).toHaveLength(1);
    const line = stripVTControlCharacters(terminal.lines[0] ?? '');
    expect(line).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] WARN: webhook attempt failed \{.*"deliveryId":"dlv_2"/);
    expect(line).not.toContain('"pid"');
  });

  it('follow TESSERA_LOG_FORMAT over the terminal’s presence', () => {
    const terminal = capture(true);
    pino(loggerOptions('info'), logDestination('json', terminal.stream)).info('plain');
    expect(JSON.parse(terminal.lines[0] ?? '{}')).toMatchObject({ msg: 'plain' });
    const piped = capture(false);
    pino(loggerOptions('info'), logDestination('pretty', piped.stream)).info('readable');
    expect(piped.lines[0]).toMatch(/INFO: readable$/);
  });
});
