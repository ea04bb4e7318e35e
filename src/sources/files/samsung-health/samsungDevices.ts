import { isRow, samsungRows } from './samsungFiles.js';
import type { ArchiveEntry, ZipArchive } from '../exportShared/zipArchive.js';

/**
 * Records name their device by `deviceuuid` only. When the export has its device table
 * (`com.samsung.health.device_profile`), a device's name and group tell the label and whether it
 * is worn; otherwise a record's device is unknown and not body-worn (docs: merged view ranking).
 */

/** Samsung Health SDK's device groups: 360001 mobile, 360002 external (scales, monitors), 360003 companion (watches, bands). */
const GROUP_COMPANION = '360003';
const WEARABLE_NAME = /watch|gear|galaxy fit|\bfit\d|band|ring|buds/i;
const MAX_DEVICES = 10_000;

export type DeviceInfo = { label: string | null; model: string | null; bodyWorn: boolean };

const UNKNOWN: DeviceInfo = { label: null, model: null, bodyWorn: false };

export class Devices {
  private readonly byUuid = new Map<string, DeviceInfo>();

  static async read(archive: ZipArchive, entries: readonly ArchiveEntry[]): Promise<Devices> {
    const devices = new Devices();
    for (const entry of entries) {
      for await (const item of samsungRows(archive, entry)) {
        if (!isRow(item) || devices.byUuid.size >= MAX_DEVICES) continue;
        const v = item.values;
        if (!v.deviceuuid) continue;
        const name = v.name ?? v.custom_name ?? null;
        const model = v.model ?? null;
        const manufacturer = v.manufacturer ?? null;
        const label = name ?? (manufacturer && model ? `${manufacturer} ${model}` : (model ?? manufacturer));
        const bodyWorn = v.device_group === GROUP_COMPANION || WEARABLE_NAME.test(`${name ?? ''} ${model ?? ''}`);
        devices.byUuid.set(v.deviceuuid, { label, model, bodyWorn });
      }
    }
    return devices;
  }

  of(uuid: string | undefined): DeviceInfo {
    return (uuid && this.byUuid.get(uuid)) || UNKNOWN;
  }
}
