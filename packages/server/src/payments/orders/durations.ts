// ISO 8601 durations for `retryPayment` ("P1D,P3D,PT12H"): years, months, weeks, days, hours, minutes,
// seconds. Calendar parts move by the calendar (a month from 31 January is 28/29 February).
import { addMonths } from '../../platform/clock/clock.ts';

export interface Duration {
  text: string;
  months: number;
  seconds: number;
}

const PATTERN = /^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/;

export function parseDuration(text: string): Duration | undefined {
  const m = PATTERN.exec(text.trim());
  if (!m || text.trim() === 'P' || text.trim().endsWith('T')) return undefined;
  const n = (i: number) => Number(m[i] ?? 0);
  const duration = {
    text: text.trim(),
    months: n(1) * 12 + n(2),
    seconds: ((n(3) * 7 + n(4)) * 24 + n(5)) * 3600 + n(6) * 60 + n(7),
  };
  return duration.months === 0 && duration.seconds === 0 ? undefined : duration;
}

export function addDuration(date: Date, duration: Duration): Date {
  return new Date(addMonths(date, duration.months).getTime() + duration.seconds * 1000);
}
