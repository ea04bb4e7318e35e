import { documentParser } from '../../shared/connectorRecords.js';
import { decodeCalibration, decodeEgv } from './decodeGlucose.js';
import { decodeEvent } from './decodeEvents.js';

/**
 * Dexcom answers `{recordType, recordVersion, userId, records: [...]}`. dataRange (one document)
 * and devices are kept as sent for what they tell the pull (the bounds, the sensors) and hold no
 * records of their own: a device's generation names the device on each glucose record instead.
 */
export const dexcomParser = documentParser('dexcom', { name: 'Dexcom', source: 'dexcom' }, {
  egvs: { list: 'records', decode: decodeEgv },
  calibrations: { list: 'records', decode: decodeCalibration },
  events: { list: 'records', decode: decodeEvent },
  devices: { list: 'records', decode: () => [] },
  dataRange: { list: null, decode: () => [] },
});
