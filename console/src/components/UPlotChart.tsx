import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';

/** A uPlot chart that fits its container's width and is rebuilt when its data or options change. */
export function UPlotChart({ options, data, label }: { options: Omit<uPlot.Options, 'width'>; data: uPlot.AlignedData; label: string }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const width = () => Math.max(280, el.clientWidth);
    const chart = new uPlot({ ...options, width: width() } as uPlot.Options, data, el);
    const observer = new ResizeObserver(() => chart.setSize({ width: width(), height: options.height }));
    observer.observe(el);
    return () => {
      observer.disconnect();
      chart.destroy();
    };
  }, [options, data]);
  return <div ref={ref} class="chart" role="img" aria-label={label} />;
}
