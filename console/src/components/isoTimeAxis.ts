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
