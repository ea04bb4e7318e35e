/**
 * The file formats a device provider uploads (spec "Uploads"): the slug is both the upload
 * route's `{device_slug}` and the records' `provider`. Their decoders are in
 * src/sources/files/<slug>/, registered in src/sources/registry.ts.
 */
export type FileFormat = { slug: string; name: string };

export const FILE_FORMATS: readonly FileFormat[] = [
  { slug: 'device-a', name: 'Apple HealthKit export' },
  { slug: 'device-b', name: 'Health Connect export' },
  { slug: 'device-c', name: 'Gadgetbridge export' },
];
