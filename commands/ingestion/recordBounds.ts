import { categoryClass, EARLIEST_RECORD_MS, FUTURE_SLACK_MS, MAX_SPAN_MS, quantityClass, type IntervalClass } from '../../src/catalog/intervalBounds.js';
import type { NormalizedRecord } from './records.js';

/**
 * Whether a normalised record's times are within what the service stores (issue 20, docs/decisions.md
 * "Record intervals"): every time between 1900-01-01 and a day after the payload was received, and
 * each interval no longer than its kind allows (src/catalog/intervalBounds.ts). Answers why not,
 * or null. Pure: judged against the receipt time, never the clock, so a re-run rejects the same.
 *
 * Every source's records pass here on their way to the log (src/processes/etl/runEtlJob.ts), so no
 * parser needs its own copy of these rules, and nothing downstream meets a record outside them.
 */
export function recordBoundsViolation(r: NormalizedRecord, receivedAt: string): string | null {
  return boundsChecker(receivedAt)(r);
}

/** `recordBoundsViolation` for every record of one payload: the receipt read once. */
export function boundsChecker(receivedAt: string): (r: NormalizedRecord) => string | null {
  const latest = Date.parse(receivedAt) + FUTURE_SLACK_MS;
  const span = (startIso: string, endIso: string, cls: IntervalClass, what: string): string | null => {
    const start = Date.parse(startIso);
    const end = Date.parse(endIso);
    if (!Number.isFinite(start) || !Number.isFinite(end)) return `${what}: start or end is not a valid time`;
    if (start < EARLIEST_RECORD_MS) return `${what}: starts ${startIso}, before 1900-01-01`;
    if (start > latest) return `${what}: starts ${startIso}, more than a day after the payload was received (${receivedAt})`;
    if (end < start) return `${what}: ends before it starts`;
    const longest = MAX_SPAN_MS[cls];
    if (cls === 'instant' && end !== start) return `${what}: a measurement at one moment, but its end differs from its start`;
    if (end - start > longest) return `${what}: spans ${hours(end - start)}, more than the ${hours(longest)} a ${cls} may span`;
    // A state's end may be planned (a due date); anything else must have happened by the receipt.
    if (cls !== 'state' && end > latest) return `${what}: ends ${endIso}, more than a day after the payload was received (${receivedAt})`;
    return null;
  };
  const date = (day: string, what: string): string | null => {
    const t = /^\d{4}-\d{2}-\d{2}$/.test(day) ? Date.parse(`${day}T00:00:00Z`) : NaN;
    if (!Number.isFinite(t)) return `${what}: ${JSON.stringify(day)} is not a date`;
    if (t < EARLIEST_RECORD_MS) return `${what}: ${day} is before 1900-01-01`;
    if (t > latest) return `${what}: ${day} is more than a day after the payload was received (${receivedAt})`;
    return null;
  };

  return (r) => {
    switch (r.kind) {
      case 'quantity':
        return span(r.start_date, r.end_date, quantityClass(r.type), `${r.type} sample`);
      case 'category':
        return span(r.start_date, r.end_date, categoryClass(r.type), `${r.type} sample`);
      case 'sleep_session': {
        const bad = span(r.bedtime_start, r.bedtime_end, 'session', 'sleep session');
        if (bad) return bad;
        for (const p of r.phases) {
          const phase = span(p.start_date, p.end_date, 'session', `sleep phase ${p.phase}`);
          if (phase) return phase;
        }
        return null;
      }
      case 'workout': {
        const bad = span(r.start_date, r.end_date, 'session', `${r.type} workout`);
        if (bad) return bad;
        for (const p of r.route) {
          const point = span(p.timestamp, p.timestamp, 'instant', 'route point');
          if (point) return point;
        }
        return null;
      }
      case 'nutrition':
        return span(r.start_date, r.end_date, 'measurement', 'nutrition record');
      case 'ecg':
        return span(r.start_date, r.end_date, 'measurement', 'ECG recording');
      case 'heartbeat_series':
        return span(r.start_date, r.end_date, 'measurement', 'heartbeat series');
      case 'observation':
        return span(r.start_date, r.end_date, 'measurement', `${r.code} observation`);
      case 'daily_summary':
        return date(r.date, 'daily summary');
      case 'menstrual_cycle': {
        const bad = date(r.start_date, 'menstrual cycle start');
        if (bad) return bad;
        if (r.period_end_date !== null) {
          const end = date(r.period_end_date, 'menstrual period end');
          if (end) return end;
          const days = (Date.parse(r.period_end_date) - Date.parse(r.start_date)) / 86_400_000;
          if (days < 0) return 'menstrual cycle: the period ends before it starts';
          if (days > MAX_PERIOD_DAYS) return `menstrual cycle: a period of ${days + 1} days, more than ${MAX_PERIOD_DAYS}`;
        }
        for (const day of Object.keys(r.flow)) {
          const flow = date(day, 'menstrual flow');
          if (flow) return flow;
        }
        return null;
      }
    }
  };
}

/** The longest menstrual period kept (a year: far beyond any real one, short enough to bound its flow days). */
const MAX_PERIOD_DAYS = 366;

function hours(ms: number): string {
  const h = ms / 3_600_000;
  return h >= 72 ? `${Math.round(h / 24)} days` : `${Number(h.toFixed(2))} h`;
}
