import type { SleepPhase } from '../../../../commands/ingestion/records.js';
import type { DeviceInfo } from './devices.js';
import type { Row } from './sqliteExport.js';
import { intOrNull } from './values.js';

/** Gadgetbridge's codes and the service's names: raw activity kinds (docs/formats/device-c.md "Raw kinds"), sleep stages, workout kinds. */

export type Stage = 'light' | 'deep' | 'rem' | 'awake';
export type KindState = { last: number };
export type SleepScheme = { name: string; classify(row: Row, state: KindState): Stage | null };

/** Huami bands in MI_BAND_ACTIVITY_SAMPLE (HuamiConst / MiBand2SampleProvider). */
export const HUAMI = { UNSET: -1, NO_CHANGE: 0, LIGHT_SLEEP: 9, IGNORE: 10, DEEP_SLEEP: 11 } as const;
/** Mi Band 1 in MI_BAND_ACTIVITY_SAMPLE (MiBandSampleProvider). */
const MI_BAND_1 = { DEEP_SLEEP: 4, LIGHT_SLEEP: 5 } as const;
/** Zepp OS devices in HUAMI_EXTENDED_ACTIVITY_SAMPLE (HuamiExtendedSampleProvider). */
const HUAMI_EXT = { SLEEP: 120, DEEP_SLEEP: 121, REM_SLEEP: 122, REM_THRESHOLD: 55, DEEP_THRESHOLD: 42 } as const;
/** Gadgetbridge's ActivityKind codes, stored as is by XiaomiSampleProvider and in BASE_ACTIVITY_SUMMARY. */
const ACTIVITY_KIND = { LIGHT_SLEEP: 0x2, DEEP_SLEEP: 0x4, REM_SLEEP: 0x01000000, AWAKE_SLEEP: 0x02000000 } as const;

const huamiScheme: SleepScheme = {
  name: 'huami',
  classify(row, state) {
    const raw = intOrNull(row.RAW_KIND);
    if (raw === null) return null;
    // MiBand2SampleProvider.postprocess: only the low nibble is the kind; 0 and 10 repeat the
    // previous kind of the same device.
    let kind = raw === HUAMI.UNSET ? raw : raw & 0xf;
    if (kind === HUAMI.NO_CHANGE || kind === HUAMI.IGNORE) kind = state.last;
    else state.last = kind;
    if (kind === HUAMI.LIGHT_SLEEP) return 'light';
    if (kind === HUAMI.DEEP_SLEEP) return 'deep';
    return null;
  },
};

const miBand1Scheme: SleepScheme = {
  name: 'mi_band_1',
  classify(row) {
    const raw = intOrNull(row.RAW_KIND);
    if (raw === MI_BAND_1.LIGHT_SLEEP) return 'light';
    if (raw === MI_BAND_1.DEEP_SLEEP) return 'deep';
    return null;
  },
};

const huamiExtendedScheme: SleepScheme = {
  name: 'huami_extended',
  classify(row) {
    const raw = intOrNull(row.RAW_KIND);
    if (raw === HUAMI_EXT.SLEEP) {
      // The band reports "sleep" for every stage; HuamiExtendedSampleProvider tells the stage
      // from the REM_SLEEP and DEEP_SLEEP columns (7 low bits) with these thresholds.
      const rem = (intOrNull(row.REM_SLEEP) ?? 0) & 127;
      const deep = (intOrNull(row.DEEP_SLEEP) ?? 0) & 127;
      if (rem > HUAMI_EXT.REM_THRESHOLD) return 'rem';
      if (deep > HUAMI_EXT.DEEP_THRESHOLD) return 'deep';
      return 'light';
    }
    if (raw === HUAMI_EXT.DEEP_SLEEP) return 'deep';
    if (raw === HUAMI_EXT.REM_SLEEP) return 'rem';
    return null;
  },
};

const activityKindScheme: SleepScheme = {
  name: 'activity_kind',
  classify(row) {
    switch (intOrNull(row.RAW_KIND)) {
      case ACTIVITY_KIND.LIGHT_SLEEP:
        return 'light';
      case ACTIVITY_KIND.DEEP_SLEEP:
        return 'deep';
      case ACTIVITY_KIND.REM_SLEEP:
        return 'rem';
      case ACTIVITY_KIND.AWAKE_SLEEP:
        return 'awake';
      default:
        return null;
    }
  },
};

export function sleepSchemeFor(table: string, device: DeviceInfo): SleepScheme | null {
  switch (table) {
    case 'MI_BAND_ACTIVITY_SAMPLE':
      return device.typeName === 'MIBAND' || (device.typeName === null && device.type === 10) ? miBand1Scheme : huamiScheme;
    case 'HUAMI_EXTENDED_ACTIVITY_SAMPLE':
      return huamiExtendedScheme;
    case 'XIAOMI_ACTIVITY_SAMPLE':
      return activityKindScheme;
    default:
      // Other devices' raw kinds are device specific: their minutes give steps and heart rate only.
      return null;
  }
}

/** XIAOMI_SLEEP_STAGE_SAMPLE.STAGE as SleepDetailsParser.decodeStage stores it. */
export function xiaomiStage(stage: number | null): SleepPhase['phase'] | null {
  switch (stage) {
    case 2:
      return 'deep';
    case 3:
      return 'light';
    case 4:
      return 'rem';
    case 0: // NOT_SLEEP inside a session
    case 5: // AWAKE
      return 'awake';
    default: // 1 = N/A
      return null;
  }
}

/** BASE_ACTIVITY_SUMMARY.ACTIVITY_KIND (ActivityKind codes) → canonical workout type. */
export const WORKOUT_TYPES: ReadonlyMap<number, readonly [gadgetbridge: string, canonical: string]> = new Map([
  [0x00000010, ['RUNNING', 'running']],
  [0x00000020, ['WALKING', 'walking']],
  [0x00000040, ['SWIMMING', 'swimming']],
  [0x00000080, ['CYCLING', 'cycling']],
  [0x00000100, ['TREADMILL', 'running']],
  [0x00000200, ['EXERCISE', 'other']],
  [0x00000400, ['SWIMMING_OPENWATER', 'swimming']],
  [0x00000800, ['INDOOR_CYCLING', 'cycling']],
  [0x00001000, ['ELLIPTICAL_TRAINER', 'elliptical']],
  [0x00002000, ['JUMP_ROPING', 'jump_rope']],
  [0x00004000, ['YOGA', 'yoga']],
  [0x00008000, ['SOCCER', 'soccer']],
  [0x00010000, ['ROWING_MACHINE', 'rowing']],
  [0x00020000, ['CRICKET', 'cricket']],
  [0x00040000, ['BASKETBALL', 'basketball']],
  [0x00080000, ['PINGPONG', 'table_tennis']],
  [0x00100000, ['BADMINTON', 'badminton']],
  [0x00200000, ['STRENGTH_TRAINING', 'strength_training']],
  [0x00400000, ['HIKING', 'hiking']],
  [0x00800000, ['CLIMBING', 'climbing']],
  [0x04000002, ['HANDCYCLING', 'hand_cycling']],
  [0x04000003, ['E_BIKE', 'cycling']],
  [0x04000004, ['BIKE_COMMUTE', 'cycling']],
  [0x04000005, ['HANDCYCLING_INDOOR', 'hand_cycling']],
  [0x04000008, ['STAIR_STEPPER', 'stair_climbing']],
  [0x04000009, ['PILATES', 'pilates']],
  [0x0400000a, ['POOL_SWIM', 'swimming']],
  [0x0400000b, ['TENNIS', 'tennis']],
  [0x0400000d, ['TABLE_TENNIS', 'table_tennis']],
  [0x0400000e, ['AMERICAN_FOOTBALL', 'american_football']],
  [0x04000010, ['CARDIO', 'mixed_cardio']],
  [0x04000012, ['INDOOR_WALKING', 'walking']],
  [0x04000013, ['XC_CLASSIC_SKI', 'cross_country_skiing']],
  [0x04000014, ['SKIING', 'downhill_skiing']],
  [0x04000015, ['SNOWBOARDING', 'snowboarding']],
  [0x04000016, ['ROWING', 'rowing']],
  [0x04000017, ['MOUNTAINEERING', 'climbing']],
  [0x0400001a, ['PADDLING', 'paddle_sports']],
  [0x04000020, ['GOLF', 'golf']],
  [0x04000025, ['INLINE_SKATING', 'skating']],
  [0x04000026, ['ROCK_CLIMBING', 'climbing']],
  [0x04000027, ['CLIMB_INDOOR', 'climbing']],
  [0x04000028, ['BOULDERING', 'climbing']],
  [0x0400002c, ['ICE_SKATING', 'skating']],
  [0x04000030, ['STAND_UP_PADDLEBOARDING', 'paddle_sports']],
  [0x04000031, ['SURFING', 'surfing']],
  [0x04000034, ['KAYAKING', 'paddle_sports']],
  [0x0400003a, ['BOXING', 'boxing']],
  [0x0400003c, ['BASEBALL', 'baseball']],
  [0x04000045, ['HIIT', 'hiit']],
  [0x04000049, ['PADEL', 'racquetball']],
  [0x0400004a, ['SQUASH', 'squash']],
  [0x04000050, ['MEDITATION', 'mind_and_body']],
  [0x04000055, ['RUGBY', 'rugby']],
  [0x04000056, ['HOCKEY', 'hockey']],
  [0x04000058, ['VOLLEYBALL', 'volleyball']],
  [0x0400005c, ['DANCE', 'dance']],
  [0x040000e2, ['MOUNTAIN_HIKE', 'hiking']],
  [0x0400005d, ['CROSS_TRAINER', 'elliptical']],
  [0x04000062, ['CROSSFIT', 'cross_training']],
  [0x04000063, ['FUNCTIONAL_TRAINING', 'functional_strength_training']],
  [0x04000067, ['CROSS_COUNTRY_RUNNING', 'running']],
  [0x0400006a, ['CORE_TRAINING', 'core_training']],
  [0x04000089, ['TAI_CHI', 'tai_chi']],
  [0x04000091, ['STAIRS', 'stair_climbing']],
  [0x040000a8, ['CROSS_COUNTRY_SKIING', 'cross_country_skiing']],
]);
