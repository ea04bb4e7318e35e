/**
 * Who produced a record (`source`) and whether its stream is body-worn: both feed the merged
 * view's ranking (spec "Merged view"). The vendor comes from the app identifier that wrote the
 * record: HealthKit's source bundle id or Health Connect's `dataOrigin.packageName`. The table
 * is in docs/sources.md; an unknown identifier leaves the provider as the source.
 */
const VENDOR_PREFIXES: readonly (readonly [prefix: string, vendor: string])[] = [
  ['com.apple.health', 'apple'],
  ['com.apple', 'apple'],
  ['com.withings', 'withings'],
  ['com.ouraring', 'oura'],
  ['com.garmin', 'garmin'],
  ['com.fitbit', 'fitbit'],
  ['com.polar', 'polar'],
  ['fi.polar', 'polar'],
  ['com.whoop', 'whoop'],
  ['com.samsung.android.wear', 'samsung'],
  ['com.sec.android.app.shealth', 'samsung'],
  ['com.samsung', 'samsung'],
  ['com.google.android.apps.fitness', 'google'],
  ['com.google.android.apps.healthdata', 'google'],
  ['com.google.android.wearable', 'google'],
  ['com.strava', 'strava'],
  ['com.xiaomi', 'xiaomi'],
  ['com.mi.health', 'xiaomi'],
  ['com.huami', 'zepp'],
  ['com.zepp', 'zepp'],
  ['com.huawei', 'huawei'],
  ['com.suunto', 'suunto'],
  ['com.coros', 'coros'],
  ['com.wahoofitness', 'wahoo'],
  ['com.eightsleep', 'eightsleep'],
  ['com.myfitnesspal', 'myfitnesspal'],
  ['cc.cronometer', 'cronometer'],
  ['com.lifesum', 'lifesum'],
  ['com.dexcom', 'dexcom'],
  ['com.omronhealthcare', 'omron'],
  ['jp.co.omron', 'omron'],
  ['com.peloton', 'peloton'],
  ['com.nike', 'nike'],
  ['nodomain.freeyourgadget.gadgetbridge', 'gadgetbridge'],
];

export function vendorOf(appId: string | null | undefined, provider: string): string {
  if (!appId) return provider;
  const id = appId.toLowerCase();
  for (const [prefix, vendor] of VENDOR_PREFIXES) {
    if (id === prefix || id.startsWith(`${prefix}.`) || id.startsWith(prefix)) return vendor;
  }
  return provider;
}

export const VENDOR_TABLE = VENDOR_PREFIXES;

/** Kinds of device worn on the body while measuring; phones, scales and apps are not. */
export type DeviceKind = 'watch' | 'ring' | 'band' | 'chest_strap' | 'phone' | 'scale' | 'other' | 'unknown';

export const BODY_WORN: ReadonlySet<DeviceKind> = new Set(['watch', 'ring', 'band', 'chest_strap']);

export function isBodyWorn(kind: DeviceKind): boolean {
  return BODY_WORN.has(kind);
}

/** HealthKit: the product type (e.g. Watch7,1, iPhone15,2) tells the hardware; a few vendors are rings or bands whatever the model says. */
export function healthKitDeviceKind(productType: string | null | undefined, deviceModel: string | null | undefined, vendor: string): DeviceKind {
  const p = `${productType ?? ''} ${deviceModel ?? ''}`.toLowerCase();
  if (p.includes('watch')) return 'watch';
  if (p.includes('iphone') || p.includes('ipad')) return 'phone';
  if (vendor === 'oura') return 'ring';
  if (vendor === 'whoop') return 'band';
  if (p.includes('ring')) return 'ring';
  if (p.includes('strap') || p.includes('h10') || p.includes('tickr')) return 'chest_strap';
  if (p.includes('band') || p.includes('fitbit')) return 'band';
  if (p.includes('scale') || vendor === 'withings') return p ? 'scale' : 'unknown';
  return p.trim() ? 'other' : 'unknown';
}

/**
 * Health Connect: `metadata.device.type` (androidx.health.connect.client.records.metadata.Device
 * TYPE_*), as the int constant or its name ("TYPE_WATCH", "WATCH", "watch").
 */
const HEALTH_CONNECT_DEVICE_TYPES: readonly (readonly [int: number, name: string, kind: DeviceKind])[] = [
  [0, 'UNKNOWN', 'unknown'],
  [1, 'WATCH', 'watch'],
  [2, 'PHONE', 'phone'],
  [3, 'SCALE', 'scale'],
  [4, 'RING', 'ring'],
  [5, 'HEAD_MOUNTED', 'other'],
  [6, 'FITNESS_BAND', 'band'],
  [7, 'CHEST_STRAP', 'chest_strap'],
  [8, 'SMART_DISPLAY', 'other'],
];

export function healthConnectDeviceKind(type: number | string | null | undefined): DeviceKind {
  if (typeof type === 'number') return HEALTH_CONNECT_DEVICE_TYPES.find(([i]) => i === type)?.[2] ?? 'unknown';
  if (typeof type === 'string') {
    const n = type.trim().toUpperCase().replace(/[^A-Z0-9]+/g, '_').replace(/^TYPE_/, '');
    return HEALTH_CONNECT_DEVICE_TYPES.find(([, name]) => name === n)?.[2] ?? 'unknown';
  }
  return 'unknown';
}
