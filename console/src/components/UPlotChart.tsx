import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';

/**
 * A uPlot chart that fits its container's width and is rebuilt when its data or options change.
 * The instance hangs on its element (`uplot`), so a test can read what was drawn: the points,
 * where lines break, the tick labels.
 */
export function UPlotChart({ options, data, label }: { options: Omit<uPlot.Options, 'width'>; data: uPlot.AlignedData; label: string }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = ref.current as (HTMLDivElement & { uplot?: uPlot }) | null;
    if (!el) return;
    const width = () => Math.max(260, el.clientWidth);
    const chart = new uPlot({ ...options, width: width() } as uPlot.Options, data, el);
    el.uplot = chart;
    const observer = new ResizeObserver(() => chart.setSize({ width: width(), height: options.height }));
    observer.observe(el);
    return () => {
      observer.disconnect();
      chart.destroy();
      delete el.uplot;
    };
  }, [options, data]);
  return <div ref={ref} class="chart" role="img" aria-label={label} />;
}
