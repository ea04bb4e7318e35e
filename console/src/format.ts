/**
 * How the console writes values: one date format everywhere (ISO 8601: YYYY-MM-DD and 24-hour
 * HH:MM, in the chosen zone), durations and lags in words a person reads at a glance.
 */

export type IsoParts = { date: string; time: string };

const partsFormatters = new Map<string, Intl.DateTimeFormat>();

/** An instant's calendar date and 24-hour time in a zone, as YYYY-MM-DD and HH:MM. */
export function isoParts(ms: number, tz = 'UTC'): IsoParts {
  let f = partsFormatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    partsFormatters.set(tz, f);
  }
  const p = Object.fromEntries(f.formatToParts(new Date(ms)).map((x) => [x.type, x.value]));
  return { date: `${p.year}-${p.month}-${p.day}`, time: `${p.hour}:${p.minute}` };
}

/** A time as the operator reads it: YYYY-MM-DD HH:MM in the chosen zone. */
export function fmtTime(iso: string | number | null | undefined, tz = 'UTC'): string {
  if (iso === null || iso === undefined) return '—';
  const ms = typeof iso === 'number' ? iso : Date.parse(iso);
  if (Number.isNaN(ms)) return String(iso);
  const { date, time } = isoParts(ms, tz);
  return `${date} ${time}`;
}

export function fmtDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '—';
  const h = Math.floor(seconds / 3600);
  const m = Math.round((seconds % 3600) / 60);
  return h ? `${h} h ${m} min` : `${m} min`;
}

const MINUTE = 60;
const HOUR = 3600;
const DAY = 86_400;
const YEAR = 365.25 * DAY;

/**
 * A lag as a person says it: "45 s", "12 min", "2 h 15 min", "3 d 4 h", "153 days", "4.9 years".
 * The exact seconds stay in the cell's title.
 */
export function fmtLag(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '—';
  const s = Math.max(0, Math.round(seconds));
  if (s < MINUTE) return `${s} s`;
  if (s < HOUR) return `${Math.floor(s / MINUTE)} min`;
  if (s < DAY) {
    const m = Math.floor((s % HOUR) / MINUTE);
    return m ? `${Math.floor(s / HOUR)} h ${m} min` : `${Math.floor(s / HOUR)} h`;
  }
  if (s < 7 * DAY) {
    const h = Math.floor((s % DAY) / HOUR);
    return h ? `${Math.floor(s / DAY)} d ${h} h` : `${Math.floor(s / DAY)} d`;
  }
  if (s < YEAR) return `${Math.floor(s / DAY)} days`;
  return `${(s / YEAR).toFixed(1)} years`;
}

/** Numbers as the API answers them, rounded for reading only where the value has a fraction. */
export function fmtNum(n: number | null | undefined, digits = 1): string {
  if (n === null || n === undefined) return '—';
  return Number.isInteger(n) ? String(n) : n.toFixed(digits);
}

/** "1 attempt", "3 attempts". */
export const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
