import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

export type RuntimeStats = {
  since: string;
  event_loop_delay_ms: { p50: number; p99: number; max: number; samples: number };
  rss_bytes: number;
  max_rss_bytes: number;
  heap_used_bytes: number;
};

/**
 * How well the thread that answers HTTP keeps up: event-loop delay (sampled every 10 ms; the
 * figures are the delay beyond that interval) and
 * memory of the whole process (worker threads included). Operators read it from
 * `GET /v1/admin/runtime`; the ingest benchmark resets it before an upload and reads it after.
 */
const RESOLUTION_MS = 10;

export class RuntimeMonitor {
  private histogram: IntervalHistogram;
  private since = new Date();

  constructor() {
    this.histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
    this.histogram.enable();
  }

  reset(): void {
    this.histogram.reset();
    this.since = new Date();
  }

  stats(): RuntimeStats {
    const h = this.histogram;
    // The histogram records the time between samples, the sampling interval included: the
    // delay is what exceeds it (an idle loop reports 0).
    const ms = (ns: number) => Math.max(0, Math.round((ns / 1e6 - RESOLUTION_MS) * 100) / 100);
    const mem = process.memoryUsage();
    return {
      since: this.since.toISOString(),
      event_loop_delay_ms: { p50: h.count ? ms(h.percentile(50)) : 0, p99: h.count ? ms(h.percentile(99)) : 0, max: h.count ? ms(h.max) : 0, samples: h.count },
      rss_bytes: mem.rss,
      // resourceUsage reports kilobytes; the peak covers every thread of the process.
      max_rss_bytes: process.resourceUsage().maxRSS * 1024,
      heap_used_bytes: mem.heapUsed,
    };
  }

  close(): void {
    this.histogram.disable();
  }
}
