// A payments order as stored: what the order's services, its IPN and its views all read.
import type { Selectable } from 'kysely';
import type { PaymentsOrdersTable } from '../../platform/db/schema.ts';

export type OrderRow = Selectable<PaymentsOrdersTable>;
