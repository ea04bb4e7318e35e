import { describe, expect, it } from 'vitest';
import { hrvFigures, orderedBeats, rrIntervalsMs } from '../../../projections/records/hrv.js';

const beats = (offsets: number[], gaps: number[] = []) => offsets.map((offset_s, i) => ({ offset_s, preceded_by_gap: gaps.includes(i) }));

describe('RR intervals from beats (Resources: heartbeat series, RR intervals)', () => {
  it('is the difference of successive beat offsets in ms, none for the first beat', () => {
    expect(rrIntervalsMs(beats([0, 0.8, 1.6, 2.5]))).toEqual([null, 800, 800, 900]);
  });

  it('has no interval ending at a beat preceded_by_gap (the time spans missing data)', () => {
    expect(rrIntervalsMs(beats([0, 0.8, 1.6, 2.5, 3.3, 4.1], [4]))).toEqual([null, 800, 800, 900, null, 800]);
  });

  it('is rounded to the microsecond, so float offsets give clean milliseconds', () => {
    expect(rrIntervalsMs(beats([0.1, 0.3, 0.7]))).toEqual([null, 200, 400]);
  });

  it('orders beats by offset before taking differences, keeping each beat its gap flag', () => {
    const ordered = orderedBeats([
      { offset_s: 1.6, preceded_by_gap: true },
      { offset_s: 0, preceded_by_gap: false },
      { offset_s: 0.8, preceded_by_gap: false },
    ]);
    expect(ordered.map((b) => b.offset_s)).toEqual([0, 0.8, 1.6]);
    expect(rrIntervalsMs(ordered)).toEqual([null, 800, null]);
  });
});

describe('derived HRV (Resources: heartbeat series with derived HRV)', () => {
  it('RMSSD and SDNN match hand-computed values', () => {
    // RR = 800, 800, 900 | gap | 800. Successive pairs (adjacent beats, both RR present):
    // (800→800) = 0, (800→900) = 100 → RMSSD = sqrt((0² + 100²) / 2) = sqrt(5000) = 70.7107 ms.
    // SDNN over 800, 800, 900, 800: mean 825, squared deviations 625+625+5625+625 = 7500,
    // population variance 7500 / 4 = 1875 → SDNN = sqrt(1875) = 43.3013 ms.
    const f = hrvFigures([null, 800, 800, 900, null, 800]);
    expect(f.rmssd_ms).toBeCloseTo(Math.sqrt(5000), 9);
    expect(f.rmssd_ms).toBeCloseTo(70.7107, 4);
    expect(f.sdnn_ms).toBeCloseTo(43.3013, 4);
  });

  it('a gap breaks the succession: the intervals either side of it are not a successive pair', () => {
    // RR 800 | gap | 1000: two RR values but no successive pair → RMSSD null.
    expect(hrvFigures([null, 800, null, 1000]).rmssd_ms).toBeNull();
  });

  it('RMSSD is null with fewer than 2 RR intervals; SDNN with fewer than 3', () => {
    expect(hrvFigures([null, 800])).toEqual({ rmssd_ms: null, sdnn_ms: null });
    // Two RR: RMSSD = |900 − 800| = 100, SDNN still null.
    expect(hrvFigures([null, 800, 900])).toEqual({ rmssd_ms: 100, sdnn_ms: null });
    // Three RR 800, 900, 1000: RMSSD = sqrt((100² + 100²)/2) = 100; SDNN = sqrt((100² + 0 + 100²)/3) = 81.6497.
    const three = hrvFigures([null, 800, 900, 1000]);
    expect(three.rmssd_ms).toBeCloseTo(100, 9);
    expect(three.sdnn_ms).toBeCloseTo(81.6497, 4);
    expect(hrvFigures([])).toEqual({ rmssd_ms: null, sdnn_ms: null });
  });
});
