import type { RoutePoint } from '../../commands/ingestion/records.js';

/**
 * Summary of a workout's GPS route, computed from the points alone (pure, so a rebuild gives
 * the same figures).
 */
export type TrackSummary = {
  /** Number of route points. */
  points: number;
  /** Sum of great-circle (haversine) distances between successive points, in metres. */
  distance_m: number;
  /** Sum of the rises between successive points that have an altitude; null when none has one. */
  elevation_gain_m: number | null;
  min_altitude_m: number | null;
  max_altitude_m: number | null;
  /** Bounding box of the points in degrees (a route across the antimeridian spans the globe). */
  bbox: { min_latitude: number; min_longitude: number; max_latitude: number; max_longitude: number };
};

/** Mean Earth radius (IUGG), metres. */
export const EARTH_RADIUS_M = 6_371_008.8;

const rad = (deg: number) => (deg * Math.PI) / 180;

/** Great-circle distance between two points by the haversine formula, in metres. */
export function haversineM(a: { latitude: number; longitude: number }, b: { latitude: number; longitude: number }): number {
  const dLat = rad(b.latitude - a.latitude);
  const dLon = rad(b.longitude - a.longitude);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(rad(a.latitude)) * Math.cos(rad(b.latitude)) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** Points in time order (stable for equal timestamps), as the summary and the route read them. */
export function orderedRoute(route: readonly RoutePoint[]): RoutePoint[] {
  return route
    .map((p, i) => ({ p, i, t: Date.parse(p.timestamp) }))
    .sort((x, y) => x.t - y.t || x.i - y.i)
    .map((x) => x.p);
}

/** The track summary of a route, or null for a workout without route points. */
export function trackSummary(route: readonly RoutePoint[]): TrackSummary | null {
  if (route.length === 0) return null;
  const pts = orderedRoute(route);
  let distance = 0;
  let gain: number | null = null;
  let minAlt: number | null = null;
  let maxAlt: number | null = null;
  let lastAlt: number | null = null;
  const first = pts[0]!;
  const bbox = { min_latitude: first.latitude, min_longitude: first.longitude, max_latitude: first.latitude, max_longitude: first.longitude };
  for (let i = 0; i < pts.length; i++) {
    const p = pts[i]!;
    if (i > 0) distance += haversineM(pts[i - 1]!, p);
    bbox.min_latitude = Math.min(bbox.min_latitude, p.latitude);
    bbox.max_latitude = Math.max(bbox.max_latitude, p.latitude);
    bbox.min_longitude = Math.min(bbox.min_longitude, p.longitude);
    bbox.max_longitude = Math.max(bbox.max_longitude, p.longitude);
    const alt = p.altitude_m;
    if (alt === null || !Number.isFinite(alt)) continue;
    minAlt = minAlt === null ? alt : Math.min(minAlt, alt);
    maxAlt = maxAlt === null ? alt : Math.max(maxAlt, alt);
    // Rises between successive points with an altitude; points without one are skipped over.
    gain = (gain ?? 0) + (lastAlt !== null && alt > lastAlt ? alt - lastAlt : 0);
    lastAlt = alt;
  }
  return { points: pts.length, distance_m: distance, elevation_gain_m: gain, min_altitude_m: minAlt, max_altitude_m: maxAlt, bbox };
}
