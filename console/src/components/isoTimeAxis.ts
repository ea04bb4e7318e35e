import type uPlot from 'uplot';
import { isoParts } from '../format.js';

/**
 * Tick labels of a time axis in ISO 8601 and the chart's zone (uPlot's own are US style,
 * M/D/YY with am/pm): YYYY-MM for months apart, YYYY-MM-DD for days, HH:MM for hours with the
 * date under the first tick and wherever the day changes.
 */
export function isoTimeValues(tz: string): uPlot.Axis.DynamicValues {
  return (_u, splits, _axis, _space, incr) => {
    let lastDate = '';
    return splits.map((s) => {
      const { date, time } = isoParts(s * 1000, tz);
      if (incr >= 28 * 86_400) return date.slice(0, 7);
      if (incr >= 86_400) return date;
      const label = date === lastDate ? time : `${time}\n${date}`;
      lastDate = date;
      return label;
    });
  };
}

/** Steps between time ticks, in minutes: the first that leaves 48 px between two labels is used. */
const TICK_STEPS = [5, 10, 15, 30, 60, 120, 180, 240, 360];
const FIVE_MIN = 300_000;

/**
 * The instants from t0 to t1 that get a tick: whole multiples of the step in the zone's own clock
 * (a 30-minute nap gets ticks every 5 or 10 minutes, not none as with hour ticks). Every zone's
 * offset is a multiple of 5 minutes, so walking the 5-minute marks finds them all.
 */
export function timeTicks(t0: number, t1: number, pxPerMinute: number, tz: string): number[] {
  const step = TICK_STEPS.find((m) => m * pxPerMinute >= 48) ?? TICK_STEPS[TICK_STEPS.length - 1]!;
  const ticks: number[] = [];
  for (let t = Math.ceil(t0 / FIVE_MIN) * FIVE_MIN; t <= t1; t += FIVE_MIN) {
    const { time } = isoParts(t, tz);
    if ((Number(time.slice(0, 2)) * 60 + Number(time.slice(3))) % step === 0) ticks.push(t);
  }
  return ticks;
}
