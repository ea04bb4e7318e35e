import type { ZipInput } from '../../../fixtures/zip/buildZip.js';

/**
 * Samsung Health "Download personal data" files as the app writes them: the data type, schema
 * version and a count on the first line, the header on the second (the SDK's own columns prefixed
 * with the data type), every data row ending with a comma.
 */
export const FOLDER = 'samsunghealth_someone_20250101120000/';

export function samsungCsv(dataType: string, columns: string[], rows: (string | number | null)[][], options: { prefix?: string; metadataLine?: boolean } = {}): ZipInput {
  const prefix = options.prefix ?? '';
  const header = columns.map((c) => (c.startsWith('*') ? c.slice(1) : `${prefix}${c}`));
  const lines = [...(options.metadataLine === false ? [] : [`${dataType},6233003,${columns.length}`]), header.join(',')];
  for (const r of rows) lines.push(`${r.map((v) => (v === null ? '' : typeof v === 'string' && /[,"\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : String(v))).join(',')},`);
  return { name: `${FOLDER}${dataType}.20250101120000.csv`, data: Buffer.from(lines.join('\n') + '\n') };
}

export const COMMON = ['time_offset', 'deviceuuid', 'pkg_name', 'datauuid', 'create_time', 'update_time'];
