import type Database from 'better-sqlite3';
import type { Provenance } from '../../../../commands/ingestion/records.js';
import { isBodyWorn, type DeviceKind } from '../../shared/vendors.js';
import { q, type Row, type TableInfo } from './sqliteExport.js';
import { intOrNull, strOrNull } from './values.js';

/** The export's devices (table DEVICE) and the provenance of their records (docs/sources.md). */

export type DeviceInfo = {
  id: number;
  /** DEVICE.IDENTIFIER (MAC address), or `device-<_id>` when the row is missing. */
  identifier: string;
  name: string | null;
  manufacturer: string | null;
  type: number | null;
  typeName: string | null;
  model: string | null;
  label: string | null;
  source: string;
  kind: DeviceKind;
};

/** DEVICE.MANUFACTURER as Gadgetbridge's coordinators write it → vendor (docs/sources.md). */
const MANUFACTURER_VENDORS: readonly (readonly [RegExp, string])[] = [
  [/xiaomi|redmi/i, 'xiaomi'],
  [/huami|amazfit|zepp/i, 'zepp'],
  [/huawei/i, 'huawei'],
  [/honor/i, 'honor'],
  [/pebble/i, 'pebble'],
  [/garmin/i, 'garmin'],
  [/fossil|skagen|misfit/i, 'fossil'],
  [/withings|nokia/i, 'withings'],
  [/polar/i, 'polar'],
  [/fitbit/i, 'fitbit'],
  [/samsung/i, 'samsung'],
  [/suunto/i, 'suunto'],
  [/coros/i, 'coros'],
  [/sony/i, 'sony'],
  [/casio/i, 'casio'],
  [/espruino|bangle/i, 'banglejs'],
  [/pine64|pinetime/i, 'pine64'],
  [/colmi/i, 'colmi'],
  [/nothing|cmf/i, 'nothing'],
];

/** Huami made the Mi Bands up to 7; Gadgetbridge records them with manufacturer "Huami". */
const XIAOMI_BRANDED = /mi\s*(smart\s*)?band|miband|xiaomi|redmi/i;

function vendorOfDevice(manufacturer: string | null, name: string | null, typeName: string | null, provider: string): string {
  for (const [pattern, vendor] of MANUFACTURER_VENDORS) {
    if (manufacturer && pattern.test(manufacturer)) {
      if (vendor === 'zepp' && XIAOMI_BRANDED.test(`${name ?? ''} ${typeName ?? ''}`)) return 'xiaomi';
      return vendor;
    }
  }
  return provider;
}

/**
 * Everything that writes Gadgetbridge activity samples, sleep or workouts is worn on the body
 * (bands, watches, rings); only scales (and phones) are not. The name tells which.
 */
function deviceKindOf(name: string | null, typeName: string | null, model: string | null): DeviceKind {
  const s = `${typeName ?? ''} ${name ?? ''} ${model ?? ''}`.toLowerCase();
  if (/scale/.test(s)) return 'scale';
  if (/phone/.test(s)) return 'phone';
  if (/\bring\b|colmi_?r\d|\br0\d\b|oura/.test(s)) return 'ring';
  if (/strap|\bh10\b|tickr/.test(s)) return 'chest_strap';
  if (/band/.test(s)) return 'band';
  if (/watch|\bgtr|\bgts|t-?rex|\bbip|falcon|cheetah|balance|stratos|verge|fenix|forerunner|venu|vivo|instinct|pebble|bangle|pinetime|versa|ionic|\bgt\s?\d/.test(s)) return 'watch';
  return 'band';
}

function deviceLabel(alias: string | null, manufacturer: string | null, name: string | null): string | null {
  if (alias && alias.trim()) return alias.trim();
  if (!name) return manufacturer;
  if (!manufacturer || name.toLowerCase().startsWith(manufacturer.toLowerCase())) return name;
  return `${manufacturer} ${name}`;
}

export function loadDevices(db: Database.Database, tables: Map<string, TableInfo>, provider: string): Map<number, DeviceInfo> {
  const devices = new Map<number, DeviceInfo>();
  const table = tables.get('DEVICE');
  if (!table || !table.columns.has('_id')) return devices;
  for (const row of db.prepare(`SELECT * FROM ${q('DEVICE')}`).all() as Row[]) {
    const id = intOrNull(row._id);
    if (id === null) continue;
    const name = strOrNull(row.NAME);
    const manufacturer = strOrNull(row.MANUFACTURER);
    const typeName = strOrNull(row.TYPE_NAME);
    const model = strOrNull(row.MODEL);
    devices.set(id, {
      id,
      identifier: strOrNull(row.IDENTIFIER) ?? `device-${id}`,
      name,
      manufacturer,
      type: intOrNull(row.TYPE),
      typeName,
      model,
      label: deviceLabel(strOrNull(row.ALIAS), manufacturer, name),
      source: vendorOfDevice(manufacturer, name, typeName, provider),
      kind: deviceKindOf(name, typeName, model),
    });
  }
  return devices;
}

export function unknownDevice(id: number, provider: string): DeviceInfo {
  // No DEVICE row: still a wearable (only wearables write these tables), vendor unknown.
  return { id, identifier: `device-${id}`, name: null, manufacturer: null, type: null, typeName: null, model: null, label: null, source: provider, kind: 'band' };
}

export function provenance(device: DeviceInfo, provider: string): Provenance {
  return { provider, source: device.source, device: device.label, body_worn: isBodyWorn(device.kind) };
}
