import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import yazl from 'yazl';
import { mulberry32 as rng } from '../../src/shared/seededRandom.js';

/**
 * A realistic Health app export of a requested size, generated as a stream (never held whole):
 * export.xml as iOS 16+ writes it (the document type declaration, records grouped by type then
 * source, dates in the phone's zone with offsets that change at daylight-saving time), from
 * overlapping sources (an Apple Watch and an iPhone both writing heart rate and steps), with
 * sleep stages every night, heart-rate-variability records with their beats, blood-pressure
 * correlations, workouts in the iOS 16 shape with statistics, events and a route in GPX files,
 * activity summaries, an ECG now and then, and a stray control character in about one record in
 * 5,000 (third-party apps write them). Deterministic: the same options give the same bytes.
 */

export type GeneratorOptions = { targetBytes: number; seed?: number };
export type GeneratedCounts = { days: number; records: number; workouts: number; ecgs: number };

const WATCH = 'device="&lt;&lt;HKDevice: 0x%P&gt;, name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch6,2, software:10.4, creation date:2023-09-20 10:11:12 +0000&gt;"';
const PHONE = 'device="&lt;&lt;HKDevice: 0x%P&gt;, name:iPhone, manufacturer:Apple Inc., model:iPhone, hardware:iPhone15,2, software:17.4&gt;"';
const WATCH_SRC = 'sourceName="Test’s Apple Watch" sourceVersion="10.4"';
const PHONE_SRC = 'sourceName="Test’s iPhone" sourceVersion="17.4"';
const START = Date.UTC(2016, 0, 4);
const DAY = 86_400_000;

/** The document type declaration as iOS 16+ writes it (element and attribute lists, no entities). */
export const IOS16_DOCTYPE = `<!DOCTYPE HealthData [
<!-- HealthKit Export Version: 14 -->
<!ELEMENT HealthData (ExportDate,Me,(Record|Correlation|Workout|ActivitySummary|ClinicalRecord|Audiogram|VisionPrescription)*)>
<!ATTLIST HealthData
  locale CDATA #REQUIRED
>
<!ELEMENT ExportDate EMPTY>
<!ATTLIST ExportDate
  value CDATA #REQUIRED
>
<!ELEMENT Record ((MetadataEntry|HeartRateVariabilityMetadataList)*)>
<!ATTLIST Record
  type          CDATA #REQUIRED
  unit          CDATA #IMPLIED
  value         CDATA #IMPLIED
  sourceName    CDATA #REQUIRED
  sourceVersion CDATA #IMPLIED
  device        CDATA #IMPLIED
  creationDate  CDATA #IMPLIED
  startDate     CDATA #REQUIRED
  endDate       CDATA #REQUIRED
>
<!ELEMENT Workout ((MetadataEntry|WorkoutEvent|WorkoutRoute|WorkoutStatistics|WorkoutActivity)*)>
<!ELEMENT WorkoutRoute ((MetadataEntry|FileReference)*)>
<!ELEMENT FileReference EMPTY>
<!ATTLIST FileReference
  path CDATA #REQUIRED
>
]>`;

const DOCTYPE = `<?xml version="1.0" encoding="UTF-8"?>
${IOS16_DOCTYPE}
<HealthData locale="en_DE">
 <ExportDate value="2026-01-01 12:00:00 +0100"/>
 <Me HKCharacteristicTypeIdentifierDateOfBirth="" HKCharacteristicTypeIdentifierBiologicalSex="HKBiologicalSexNotSet" HKCharacteristicTypeIdentifierBloodType="HKBloodTypeNotSet" HKCharacteristicTypeIdentifierFitzpatrickSkinType="HKFitzpatrickSkinTypeNotSet" HKCharacteristicTypeIdentifierCardioFitnessMedicationsUse="None"/>
`;

/** Central European time: +0200 from the last Sunday of March to the last Sunday of October (01:00 UTC). */
function berlinOffsetMin(ms: number): number {
  const y = new Date(ms).getUTCFullYear();
  const lastSunday = (month: number) => {
    const d = new Date(Date.UTC(y, month + 1, 0, 1));
    return d.getTime() - d.getUTCDay() * DAY;
  };
  return ms >= lastSunday(2) && ms < lastSunday(9) ? 120 : 60;
}

function pad(n: number, w = 2): string {
  return String(n).padStart(w, '0');
}

/** `2024-03-31 03:00:00 +0200`: the local time in the phone's zone, as export.xml writes every date. */
function exportDate(ms: number): string {
  const off = berlinOffsetMin(ms);
  const d = new Date(ms + off * 60_000);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} +${pad(off / 60)}00`;
}

function clock(ms: number): string {
  const d = new Date(ms + berlinOffsetMin(ms) * 60_000);
  const h = d.getUTCHours();
  return `${((h + 11) % 12) + 1}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(Math.floor(d.getUTCMilliseconds() / 10))} ${h < 12 ? 'AM' : 'PM'}`;
}

type Emit = (s: string) => void;

function record(emit: Emit, r: () => number, type: string, src: string, dev: string, unit: string | null, s: number, e: number, value: string, meta = ''): void {
  const stray = r() < 0.0002 ? '\u0001' : '';
  const device = dev.replace('%P', Math.floor(r() * 0xffffffff).toString(16));
  const attrs = `type="${type}" ${src} ${device}${unit ? ` unit="${unit}"` : ''} creationDate="${exportDate(e + 30_000)}" startDate="${exportDate(s)}" endDate="${exportDate(e)}" value="${value}${stray}"`;
  emit(meta ? ` <Record ${attrs}>\n${meta} </Record>\n` : ` <Record ${attrs}/>\n`);
}

const tz = '  <MetadataEntry key="HKTimeZone" value="Europe/Berlin"/>\n';

/** One type's records of every day, one source after the other (Apple groups them so). */
type Series = (emit: Emit, r: () => number, day: number) => void;

const SERIES: Series[] = [
  // Heart rate: the watch every ~5 min, the phone (a paired strap app) now and then.
  (emit, r, d) => {
    for (let i = 0; i < 288; i++) {
      const t = d + i * 300_000 + Math.floor(r() * 60_000);
      record(emit, r, 'HKQuantityTypeIdentifierHeartRate', WATCH_SRC, WATCH, 'count/min', t, t, String(55 + Math.floor(r() * 60)), `  <MetadataEntry key="HKMetadataKeyHeartRateMotionContext" value="${Math.floor(r() * 3)}"/>\n`);
    }
  },
  (emit, r, d) => {
    for (let i = 0; i < 24; i++) {
      const t = d + i * 3_600_000 + 1_800_000;
      record(emit, r, 'HKQuantityTypeIdentifierHeartRate', PHONE_SRC, PHONE, 'count/min', t, t, String(60 + Math.floor(r() * 40)));
    }
  },
  // Steps, overlapping: the watch in 15-minute buckets, the phone in 10-minute ones.
  (emit, r, d) => {
    for (let i = 0; i < 96; i++) record(emit, r, 'HKQuantityTypeIdentifierStepCount', WATCH_SRC, WATCH, 'count', d + i * 900_000, d + (i + 1) * 900_000 - 1000, String(Math.floor(r() * 900)));
  },
  (emit, r, d) => {
    for (let i = 0; i < 144; i++) record(emit, r, 'HKQuantityTypeIdentifierStepCount', PHONE_SRC, PHONE, 'count', d + i * 600_000, d + (i + 1) * 600_000 - 1000, String(Math.floor(r() * 600)));
  },
  (emit, r, d) => {
    for (let i = 0; i < 144; i++) record(emit, r, 'HKQuantityTypeIdentifierDistanceWalkingRunning', PHONE_SRC, PHONE, 'km', d + i * 600_000, d + (i + 1) * 600_000 - 1000, (r() * 0.5).toFixed(5));
  },
  (emit, r, d) => {
    for (let i = 0; i < 480; i++) record(emit, r, 'HKQuantityTypeIdentifierActiveEnergyBurned', WATCH_SRC, WATCH, 'kcal', d + i * 180_000, d + i * 180_000 + 60_000, (r() * 3).toFixed(3));
  },
  (emit, r, d) => {
    for (let i = 0; i < 288; i++) record(emit, r, 'HKQuantityTypeIdentifierBasalEnergyBurned', WATCH_SRC, WATCH, 'kcal', d + i * 300_000, d + (i + 1) * 300_000, (0.8 + r() * 0.5).toFixed(3));
  },
  (emit, r, d) => {
    record(emit, r, 'HKQuantityTypeIdentifierRestingHeartRate', WATCH_SRC, WATCH, 'count/min', d, d + DAY - 1000, String(50 + Math.floor(r() * 10)));
  },
  // Heart-rate variability with the beats it was computed from.
  (emit, r, d) => {
    for (let i = 0; i < 4; i++) {
      const s = d + i * 6 * 3_600_000 + 7_200_000;
      let beats = '';
      let t = s + 500;
      for (let b = 0; b < 60; b++, t += 800 + Math.floor(r() * 300)) beats += `   <InstantaneousBeatsPerMinute bpm="${60 + Math.floor(r() * 20)}" time="${clock(t)}"/>\n`;
      record(emit, r, 'HKQuantityTypeIdentifierHeartRateVariabilitySDNN', WATCH_SRC, WATCH, 'ms', s, s + 60_000, (20 + r() * 60).toFixed(4), `  <HeartRateVariabilityMetadataList>\n${beats}  </HeartRateVariabilityMetadataList>\n`);
    }
  },
  (emit, r, d) => {
    if (Math.floor(d / DAY) % 3 === 0) record(emit, r, 'HKQuantityTypeIdentifierBodyMass', 'sourceName="Scale App" sourceVersion="6.1"', '', 'kg', d + 25_200_000, d + 25_200_000, (70 + r() * 5).toFixed(2));
  },
  // A type the catalog does not know (a child's watch's move minutes): rejected with a reason, as real exports have some.
  (emit, r, d) => {
    for (let i = 0; i < 8; i++) record(emit, r, 'HKQuantityTypeIdentifierAppleMoveTime', WATCH_SRC, WATCH, 'min', d + i * 10_800_000, d + i * 10_800_000 + 1_800_000, (r() * 30).toFixed(2));
  },
  // Sleep: the phone's time in bed, the watch's stages (iOS 16+), one night each day.
  (emit, r, d) => {
    const s = d - 2 * 3_600_000;
    record(emit, r, 'HKCategoryTypeIdentifierSleepAnalysis', PHONE_SRC, PHONE, null, s, s + 8 * 3_600_000, 'HKCategoryValueSleepAnalysisInBed', tz);
  },
  (emit, r, d) => {
    const stages = ['AsleepCore', 'AsleepDeep', 'AsleepCore', 'AsleepREM', 'Awake'];
    let t = d - 2 * 3_600_000 + 600_000;
    for (let i = 0; i < 28; i++) {
      const len = (8 + Math.floor(r() * 14)) * 60_000;
      record(emit, r, 'HKCategoryTypeIdentifierSleepAnalysis', WATCH_SRC, WATCH, null, t, t + len, `HKCategoryValueSleepAnalysis${stages[i % stages.length]}`, tz);
      t += len;
    }
  },
  (emit, r, d) => {
    for (let i = 8; i < 22; i++) record(emit, r, 'HKCategoryTypeIdentifierAppleStandHour', WATCH_SRC, WATCH, null, d + i * 3_600_000, d + (i + 1) * 3_600_000, r() < 0.7 ? 'HKCategoryValueAppleStandHourStood' : 'HKCategoryValueAppleStandHourIdle');
  },
];

function bloodPressure(emit: Emit, r: () => number, d: number): void {
  if (Math.floor(d / DAY) % 7 !== 0) return;
  const t = exportDate(d + 28_800_000);
  const m = (k: string, v: number) => `  <Record type="HKQuantityTypeIdentifierBloodPressure${k}" sourceName="Cuff App" unit="mmHg" creationDate="${t}" startDate="${t}" endDate="${t}" value="${v}"/>\n`;
  emit(` <Correlation type="HKCorrelationTypeIdentifierBloodPressure" sourceName="Cuff App" sourceVersion="3.2" creationDate="${t}" startDate="${t}" endDate="${t}">\n${m('Systolic', 110 + Math.floor(r() * 25))}${m('Diastolic', 70 + Math.floor(r() * 15))} </Correlation>\n`);
}

export function routeName(w: number): string {
  const d = new Date(START + w * 2 * DAY + 61_200_000);
  return `route_${d.toISOString().slice(0, 10)}_${w % 12 || 12}.00pm.gpx`;
}

function workout(emit: Emit, r: () => number, w: number): void {
  const s = START + w * 2 * DAY + 61_200_000;
  const e = s + (30 + Math.floor(r() * 40)) * 60_000;
  const km = ((e - s) / 60_000 / 6).toFixed(5);
  const st = (type: string, unit: string, attrs: string) => `  <WorkoutStatistics type="HKQuantityTypeIdentifier${type}" startDate="${exportDate(s)}" endDate="${exportDate(e)}" ${attrs} unit="${unit}"/>\n`;
  emit(
    ` <Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="${((e - s) / 60_000).toFixed(6)}" durationUnit="min" ${WATCH_SRC} ${WATCH.replace('%P', 'a1b2c3')} creationDate="${exportDate(e + 10_000)}" startDate="${exportDate(s)}" endDate="${exportDate(e)}">\n` +
      `  <MetadataEntry key="HKIndoorWorkout" value="0"/>\n${tz}  <MetadataEntry key="HKWeatherTemperature" value="${50 + Math.floor(r() * 30)} degF"/>\n` +
      `  <WorkoutEvent type="HKWorkoutEventTypePause" date="${exportDate(s + 600_000)}"/>\n  <WorkoutEvent type="HKWorkoutEventTypeResume" date="${exportDate(s + 660_000)}"/>\n` +
      st('ActiveEnergyBurned', 'kcal', `sum="${(300 + r() * 300).toFixed(3)}"`) +
      st('DistanceWalkingRunning', 'km', `sum="${km}"`) +
      st('HeartRate', 'count/min', `average="${(130 + r() * 20).toFixed(3)}" minimum="90" maximum="${170 + Math.floor(r() * 10)}"`) +
      st('StepCount', 'count', `sum="${Math.floor((e - s) / 400)}"`) +
      `  <WorkoutRoute ${WATCH_SRC} creationDate="${exportDate(e + 20_000)}" startDate="${exportDate(s)}" endDate="${exportDate(e)}">\n   <MetadataEntry key="HKMetadataKeySyncVersion" value="2"/>\n   <FileReference path="/workout-routes/${routeName(w)}"/>\n  </WorkoutRoute>\n </Workout>\n`,
  );
}

/** The route file of workout `w`: a point a second. */
export function gpxOf(w: number, seed = 1): string {
  const r = rng(seed * 7919 + w);
  const s = START + w * 2 * DAY + 61_200_000;
  let lat = 52.5 + r() * 0.1;
  let lon = 13.3 + r() * 0.1;
  const pts: string[] = [];
  for (let i = 0; i < 1800; i++) {
    lat += (r() - 0.5) * 0.0001;
    lon += (r() - 0.5) * 0.0001;
    pts.push(`<trkpt lon="${lon.toFixed(6)}" lat="${lat.toFixed(6)}"><ele>${(35 + r() * 5).toFixed(6)}</ele><time>${new Date(s + i * 1000).toISOString().slice(0, 19)}Z</time><extensions><speed>${(2.5 + r()).toFixed(6)}</speed><course>${(r() * 360).toFixed(6)}</course><hAcc>${(2 + r() * 3).toFixed(6)}</hAcc><vAcc>${(1 + r() * 2).toFixed(6)}</vAcc></extensions></trkpt>`);
  }
  return `<?xml version="1.0" encoding="UTF-8"?>\n<gpx version="1.1" creator="Apple Health Export" xmlns="http://www.topografix.com/GPX/1/1">\n  <metadata>\n    <time>2026-01-01T11:00:00Z</time>\n  </metadata>\n  <trk>\n    <name>Route</name>\n    <trkseg>\n      ${pts.join('\n      ')}\n    </trkseg>\n  </trk>\n</gpx>\n`;
}

export function ecgOf(i: number, seed = 1): string {
  const r = rng(seed * 104_729 + i);
  const s = START + i * 30 * DAY + 32_400_000;
  const v: string[] = [];
  for (let k = 0; k < 15_360; k++) v.push((Math.sin(k / 20) * 200 + (r() - 0.5) * 40).toFixed(3));
  return `Name,Test Person\nDate of Birth,"Jan 1, 1970"\nRecorded Date,${exportDate(s)}\nClassification,Sinus Rhythm\nSymptoms,\nSoftware Version,2.0\nDevice,"Watch6,2"\nSample Rate,512 hertz\nLead,Lead I\nUnit,µV\n\n${v.join('\n')}\n`;
}

/** export.xml's text in pieces of about 1 MiB, with the counts once it ends. */
export function exportXmlChunks(opts: GeneratorOptions, counts: GeneratedCounts): Generator<string> {
  const seed = opts.seed ?? 1;
  // One day of every series is about 650 KB with the workouts and summaries; measured, not guessed.
  let perDay = 0;
  const probe = rng(seed);
  for (const series of SERIES) series((s) => (perDay += s.length), probe, START);
  perDay += 2500;
  const days = Math.max(1, Math.ceil((opts.targetBytes - DOCTYPE.length) / perDay));
  counts.days = days;
  counts.workouts = Math.floor(days / 2);
  counts.ecgs = Math.floor(days / 30);
  return (function* () {
    let buf = DOCTYPE;
    const emit: Emit = (s) => {
      buf += s;
    };
    const r = rng(seed);
    let records = 0;
    const flush = function* () {
      if (buf.length > 1 << 20) {
        yield buf;
        buf = '';
      }
    };
    for (const series of SERIES) {
      for (let d = 0; d < days; d++) {
        const before = buf.length;
        series(emit, r, START + d * DAY);
        if (buf.length > before) records += (buf.slice(before).match(/<Record /g) ?? []).length;
        yield* flush();
      }
    }
    for (let d = 0; d < days; d++) {
      bloodPressure(emit, r, START + d * DAY);
      yield* flush();
    }
    for (let w = 0; w < counts.workouts; w++) {
      workout(emit, r, w);
      yield* flush();
    }
    for (let d = 0; d < days; d++) {
      const day = new Date(START + d * DAY).toISOString().slice(0, 10);
      emit(` <ActivitySummary dateComponents="${day}" activeEnergyBurned="${(400 + r() * 300).toFixed(3)}" activeEnergyBurnedGoal="500" activeEnergyBurnedUnit="kcal" appleMoveTime="0" appleMoveTimeGoal="0" appleExerciseTime="${Math.floor(r() * 60)}" appleExerciseTimeGoal="30" appleStandHours="${8 + Math.floor(r() * 6)}" appleStandHoursGoal="12"/>\n`);
      yield* flush();
    }
    counts.records = records;
    yield `${buf}</HealthData>\n`;
  })();
}

/** Writes export.xml to `path`. */
export async function writeExportXml(path: string, opts: GeneratorOptions): Promise<GeneratedCounts> {
  const counts: GeneratedCounts = { days: 0, records: 0, workouts: 0, ecgs: 0 };
  await pipeline(Readable.from(exportXmlChunks(opts, counts)), createWriteStream(path));
  return counts;
}

/** Writes export.zip (apple_health_export/export.xml, export_cda.xml, workout-routes/*.gpx, electrocardiograms/*.csv) to `path`. */
export async function writeExportZip(path: string, opts: GeneratorOptions): Promise<GeneratedCounts> {
  const counts: GeneratedCounts = { days: 0, records: 0, workouts: 0, ecgs: 0 };
  const zip = new yazl.ZipFile();
  const mtime = new Date(Date.UTC(2026, 0, 1));
  const chunks = exportXmlChunks(opts, counts);
  zip.addReadStream(Readable.from(chunks), 'apple_health_export/export.xml', { mtime });
  zip.addBuffer(Buffer.from('<?xml version="1.0" encoding="UTF-8"?>\n<ClinicalDocument xmlns="urn:hl7-org:v3"/>\n'), 'apple_health_export/export_cda.xml', { mtime });
  const out = pipeline(zip.outputStream, createWriteStream(path));
  // exportXmlChunks has planned the days (and so the workouts) already; each file is made when its turn comes.
  const lazily = (make: () => string) => Readable.from((function* () { yield make(); })());
  for (let w = 0; w < counts.workouts; w++) zip.addReadStream(lazily(() => gpxOf(w, opts.seed)), `apple_health_export/workout-routes/${routeName(w)}`, { mtime });
  for (let i = 0; i < counts.ecgs; i++) zip.addReadStream(lazily(() => ecgOf(i, opts.seed)), `apple_health_export/electrocardiograms/ecg_${i}.csv`, { mtime });
  zip.end();
  await out;
  return counts;
}
