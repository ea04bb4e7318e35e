import { VENDOR_TABLE } from '../../shared/vendors.js';

/**
 * The vendor of an export.xml record. HealthKit's bundle ids, which name the vendor for device-a
 * (docs/sources.md), are not in the export; the device's manufacturer and model, or else the
 * source's name, are. Vendor names are those of the same table; Apple's own devices and apps
 * (Apple Watch, iPhone, the Health app) are `apple`.
 */
const VENDORS: readonly string[] = [...new Set(VENDOR_TABLE.map(([, vendor]) => vendor))].sort((a, b) => b.length - a.length);

function vendorIn(text: string | null): string | null {
  if (!text) return null;
  const t = text.toLowerCase();
  for (const v of VENDORS) {
    // Whole words only: "polar" in "Polar Flow", never inside another word.
    const i = t.indexOf(v);
    if (i !== -1 && !/[a-z]/.test(t[i - 1] ?? '') && !/[a-z]/.test(t[i + v.length] ?? '')) return v;
  }
  return null;
}

export function vendorOfExportRecord(o: Record<string, unknown>): string | null {
  const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null);
  const maker = str(o.device_manufacturer);
  const model = `${str(o.device_model) ?? ''} ${str(o.product_type) ?? ''}`.toLowerCase();
  if (maker?.toLowerCase().startsWith('apple') || /\b(watch|iphone|ipad)/.test(model)) return 'apple';
  const name = str(o.source_name);
  return vendorIn(maker) ?? vendorIn(name) ?? (name && /\b(iphone|ipad)\b/i.test(name) ? 'apple' : null);
}
