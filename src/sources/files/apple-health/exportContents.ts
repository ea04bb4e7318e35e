import type { ArchiveEntry } from '../exportShared/zipArchive.js';

/** What the decoder reads of the Health app's export.zip, picked from its entries by name. */
export type ExportContents = {
  /** The export document: `export.xml` (any folder), else the largest other `.xml` that is not a CDA file or a route. */
  exportXml: ArchiveEntry | null;
  /** Route files by their path below the export folder, e.g. `workout-routes/route_2024-01-01_8.00am.gpx`. */
  routes: Map<string, ArchiveEntry>;
  /** `electrocardiograms/*.csv`, in name order. */
  ecgs: ArchiveEntry[];
};

export function exportContentsOf(entries: readonly ArchiveEntry[]): ExportContents {
  const xmls: ArchiveEntry[] = [];
  const routes = new Map<string, ArchiveEntry>();
  const ecgs: ArchiveEntry[] = [];
  for (const entry of entries) {
    const lower = entry.name.toLowerCase();
    const base = lower.slice(lower.lastIndexOf('/') + 1);
    if (lower.endsWith('.gpx') && lower.includes('workout-routes/')) routes.set(afterExportFolder(entry.name), entry);
    else if (lower.endsWith('.csv') && lower.includes('electrocardiograms/')) ecgs.push(entry);
    else if (base.endsWith('.xml') && !base.endsWith('_cda.xml') && !lower.includes('workout-routes/')) xmls.push(entry);
  }
  ecgs.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const named = xmls.find((e) => e.name.toLowerCase().split('/').pop() === 'export.xml');
  // Older iOS versions localised the document's name (e.g. "Exportieren.xml").
  const exportXml = named ?? xmls.sort((a, b) => b.uncompressedSize - a.uncompressedSize || (a.name < b.name ? -1 : 1))[0] ?? null;
  return { exportXml, routes, ecgs };
}

/** A path below the export folder: `apple_health_export/workout-routes/x.gpx` → `workout-routes/x.gpx`. */
function afterExportFolder(name: string): string {
  const i = name.toLowerCase().lastIndexOf('workout-routes/');
  return name.slice(i);
}

/** The key a `FileReference path="/workout-routes/…"` names in ExportContents.routes. */
export function routeKeyOf(path: string): string {
  const i = path.toLowerCase().lastIndexOf('workout-routes/');
  return i === -1 ? path.replace(/^\/+/, '') : path.slice(i);
}
