// Where a chain adapter hands its news: the sink registered for the prefix of the transfer's reference.
import type { Tx } from '../../platform/db/database.ts';
import type { ChainNews, ChainSink } from './port.ts';

export class ChainSinks {
  private readonly sinks = new Map<string, ChainSink>();

  connect(prefix: string, sink: ChainSink): void {
    this.sinks.set(prefix, sink);
  }

  async tell(tx: Tx, news: ChainNews): Promise<void> {
    const prefix = news.transfer.reference.split(':')[0] ?? '';
    const sink = this.sinks.get(prefix);
    if (!sink) throw new Error(`no chain sink for references "${prefix}:…"`);
    await sink(tx, news);
  }
}
