import type { RoutePoint } from '../types.js';
import { plural } from '../format.js';

/**
 * A workout's route as an SVG polyline: longitude scaled by the cosine of the mean latitude
 * (an equirectangular view, true enough for the few kilometres of a workout), north up.
 */
export function RouteMap({ points }: { points: RoutePoint[] }) {
  if (points.length < 2) return <p class="muted">{points.length ? 'The route has one point.' : 'This workout has no route.'}</p>;
  const lat0 = points.reduce((s, p) => s + p.latitude, 0) / points.length;
  const k = Math.cos((lat0 * Math.PI) / 180);
  const xs = points.map((p) => p.longitude * k);
  const ys = points.map((p) => -p.latitude);
  const [minX, maxX, minY, maxY] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  const span = Math.max(maxX - minX, maxY - minY) || 1e-6;
  const size = 300;
  const pad = 12;
  const px = (i: number) => pad + ((xs[i]! - minX) / span) * (size - 2 * pad);
  const py = (i: number) => pad + ((ys[i]! - minY) / span) * (size - 2 * pad);
  const path = points.map((_, i) => `${px(i).toFixed(1)},${py(i).toFixed(1)}`).join(' ');
  const last = points.length - 1;
  return (
    <svg viewBox={`0 0 ${size} ${size}`} class="route" role="img" aria-label={`Route of ${plural(points.length, 'point')}, north up; green marks the start, red the end`} data-testid="route" data-points={points.length}>
      <rect x={0} y={0} width={size} height={size} class="route-bg" />
      <polyline points={path} class="route-line" />
      <circle cx={px(0)} cy={py(0)} r={5} fill="#2e7d32" />
      <circle cx={px(last)} cy={py(last)} r={5} fill="#c62828" />
    </svg>
  );
}
