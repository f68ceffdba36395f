// The billing schedule of a recurring order: the k-th bill falls k intervals after the anchor, computed
// from the anchor each time (never from the previous bill), so month-end dates do not drift: anchored on
// 31 January, bills fall on 28/29 February, 31 March, 30 April.
import { addMonths } from '../../platform/clock/clock.ts';

export function billTime(
  anchor: Date,
  intervalType: 'day' | 'month',
  intervalValue: number,
  k: number,
): Date {
  return intervalType === 'day'
    ? new Date(anchor.getTime() + k * intervalValue * 86_400_000)
    : addMonths(anchor, k * intervalValue);
}
