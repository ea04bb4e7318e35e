/**
 * The file formats a device provider uploads (spec "Uploads"): the slug is both the upload
 * route's `{device_slug}` and the records' `provider`. Their decoders are in
 * src/sources/files/<slug>/, registered in src/sources/registry.ts.
 */
export type FileFormat = { slug: string; name: string; kind: 'device' | 'import' };

export const FILE_FORMATS: readonly FileFormat[] = [
  { slug: 'device-a', name: 'Apple HealthKit export', kind: 'device' },
  { slug: 'device-b', name: 'Health Connect export', kind: 'device' },
  { slug: 'device-c', name: 'Gadgetbridge export', kind: 'device' },
  // contracts §13: the native exports people have, any size (resumable uploads up to IMPORT_MAX_BYTES).
  { slug: 'apple-health', name: "Apple Health app export (export.zip or export.xml)", kind: 'import' },
  { slug: 'health-connect', name: 'Health Connect "Export data" zip', kind: 'import' },
  { slug: 'fitbit-takeout', name: 'Fitbit data from Google Takeout', kind: 'import' },
  { slug: 'samsung-health', name: 'Samsung Health "Download personal data" zip', kind: 'import' },
  // contracts §17: the CSV export of Dexcom Clarity, the export CGM users have.
  { slug: 'dexcom-clarity', name: 'Dexcom Clarity CSV export', kind: 'import' },
  // contracts §20: sport devices without an API.
  { slug: 'fit', name: 'FIT files of sport devices (.fit, or a zip of them)', kind: 'import' },
];
