import { boundedMemo } from '../../../shared/boundedCache.js';
import { flat } from './flatString.js';

/**
 * export.xml's `device` attribute is HKDevice's description:
 * `<<HKDevice: 0x282a45810>, name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch6,7, software:10.2>`
 * (newer ones add `, creation date:2025-08-14 23:49:07 +0000`). Fields are separated by ", " (a
 * hardware version like "Watch6,7" has a comma without the space).
 */
export type DeviceInfo = {
  name: string | null;
  manufacturer: string | null;
  model: string | null;
  hardware: string | null;
  software: string | null;
};

const NONE: DeviceInfo = { name: null, manufacturer: null, model: null, hardware: null, software: null };
const FIELDS: Readonly<Record<string, keyof DeviceInfo>> = {
  name: 'name',
  manufacturer: 'manufacturer',
  model: 'model',
  hardware: 'hardware',
  software: 'software',
};

function parse(description: string): DeviceInfo {
  let s = description.trim();
  if (s.startsWith('<<')) {
    const close = s.indexOf('>');
    s = s.slice(close + 1);
  }
  if (s.endsWith('>')) s = s.slice(0, -1);
  const out: DeviceInfo = { ...NONE };
  for (const part of s.split(', ')) {
    const colon = part.indexOf(':');
    if (colon === -1) continue;
    const field = FIELDS[part.slice(0, colon).trim()];
    const value = part.slice(colon + 1).trim();
    if (field && value !== '') out[field] = value;
  }
  return out;
}

/** The object's address changes on nearly every record: the cache key leaves it out. */
const byDescription = boundedMemo(parse, { max: 512, maxKeyLength: 1024 });

export function deviceInfoOf(description: string | undefined): DeviceInfo {
  if (description === undefined || description === '') return NONE;
  const at = description.indexOf('0x');
  const end = at === -1 ? -1 : description.indexOf('>', at);
  // A copy: the memo keeps its key, and the parser's string is a slice of a whole text chunk.
  return byDescription(flat(at === -1 || end === -1 ? description : description.slice(0, at) + description.slice(end)));
}
