import { createHash } from 'node:crypto';
import { StringDecoder } from 'node:string_decoder';
import type { Readable } from 'node:stream';
import { APPLE_FILE_LIMITS } from '../exportShared/parserLimits.js';
import { contentId } from './exportIds.js';
import { type Obj, fail, instantOf } from './exportFields.js';

/**
 * `electrocardiograms/ecg_<date>.csv`: one Apple Watch recording. A header of `key,value` lines
 * (name, date of birth, recorded date, classification, symptoms, software version, device, sample
 * rate, lead, unit; the keys are in the phone's language), a blank line, then one voltage per
 * line. Becomes device-a's ECG line. The name and date of birth are never read into the record.
 * Header fields are recognised by their English keys and, whatever the language, by the shape of
 * their values (a date with an offset, `512 hertz`, `µV`, `Watch4,4`).
 */

const MAX_ECG_BYTES = APPLE_FILE_LIMITS.maxEcgBytes;

/** Apple's English classification labels → HKElectrocardiogram.Classification case names (device-a). */
const CLASSIFICATIONS: Readonly<Record<string, string>> = {
  'sinus rhythm': 'sinusRhythm',
  'atrial fibrillation': 'atrialFibrillation',
  inconclusive: 'inconclusiveOther',
  'poor recording': 'inconclusivePoorReading',
  'heart rate over 150': 'inconclusiveHighHeartRate',
  'heart rate over 120': 'inconclusiveHighHeartRate',
  'high heart rate': 'inconclusiveHighHeartRate',
  'heart rate under 50': 'inconclusiveLowHeartRate',
  'low heart rate': 'inconclusiveLowHeartRate',
  'not set': 'notSet',
};

export type EcgLineError = { line: number; reason: string };

export async function readCsvText(stream: Readable): Promise<string> {
  const decoder = new StringDecoder('utf8');
  let text = '';
  let bytes = 0;
  try {
    for await (const chunk of stream) {
      bytes += (chunk as Buffer).length;
      if (bytes > MAX_ECG_BYTES) fail(`the file is larger than ${MAX_ECG_BYTES} bytes, not one recording`);
      text += decoder.write(chunk as Buffer);
    }
  } finally {
    stream.destroy();
  }
  return text + decoder.end();
}

/** `Key,"a, b"` → ['Key', 'a, b']. */
function splitPair(line: string): [string, string] {
  const comma = line.indexOf(',');
  if (comma === -1) return [line.trim(), ''];
  let value = line.slice(comma + 1).trim();
  if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1).replace(/""/g, '"');
  return [line.slice(0, comma).trim(), value];
}

function voltageOf(line: string): number {
  const t = line.trim();
  return Number(/^-?\d+,\d+$/.test(t) ? t.replace(',', '.') : t);
}

/** The ECG line object of one CSV file; throws LineError (with `lineNo` set) for a file that cannot be read. */
export function ecgObject(text: string, file: string): Obj {
  const lines = text.split(/\r?\n/);
  let i = 0;
  if (lines[0]?.charCodeAt(0) === 0xfeff) lines[0] = lines[0].slice(1);
  const header = new Map<string, string>();
  let recorded: string | undefined;
  let rate = NaN;
  let unit = 'mcV';
  let product: string | null = null;
  for (; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === '') continue;
    if (Number.isFinite(voltageOf(line))) break;
    const [key, value] = splitPair(line);
    header.set(key.toLowerCase(), value);
    if (recorded === undefined && !Number.isNaN(instantOf(value))) recorded = value;
    const hz = /^([\d.,]+)\s*(hertz|hz)$/i.exec(value);
    if (hz) rate = Number(hz[1]!.replace(',', '.'));
    if (/^(µV|μV|uV|mcV)$/.test(value)) unit = 'mcV';
    else if (value === 'mV') unit = 'mV';
    if (/^(Watch|iPhone)\d+,\d+$/.test(value)) product = value;
  }
  if (recorded === undefined) fail('no recorded date with a time zone in the header');
  if (!(rate > 0)) fail('no sample rate (e.g. "512 hertz") in the header');
  const voltages: number[] = [];
  const digest = createHash('sha256');
  for (; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === '') continue;
    const v = voltageOf(line);
    if (!Number.isFinite(v)) fail(`line ${i + 1}: ${JSON.stringify(line.slice(0, 40))} is not a voltage`);
    voltages.push(v);
    digest.update(`${v}\n`);
  }
  if (voltages.length === 0) fail('no voltages after the header');
  const start = instantOf(recorded);
  const label = header.get('classification') ?? null;
  const symptoms = header.get('symptoms');
  const metadata: Obj = { file };
  if (label !== null) metadata.classification_label = label;
  if (symptoms) metadata.symptoms = symptoms;
  const software = header.get('software version');
  if (software) metadata.software_version = software;
  const lead = header.get('lead');
  if (lead) metadata.lead = lead;
  return {
    kind: 'ecg',
    uuid: contentId('ahe', [start, rate, voltages.length, digest.digest('hex')]),
    start_date: recorded,
    end_date: new Date(start + Math.round((voltages.length / rate) * 1000)).toISOString(),
    source_name: null,
    source_bundle_id: null,
    device_model: product?.startsWith('Watch') ? 'Watch' : null,
    product_type: product,
    device_manufacturer: product ? 'Apple Inc.' : null,
    classification: label === null ? null : (CLASSIFICATIONS[label.toLowerCase()] ?? label),
    // The CSV names symptoms only when some were logged: an empty field does not tell "none" from "not asked".
    symptoms_status: symptoms ? 'present' : null,
    sampling_frequency: { value: rate, unit: 'Hz' },
    voltage_unit: unit,
    voltages,
    metadata,
  };
}
