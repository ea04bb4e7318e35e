/**
 * Every bound the export readers put on what a stranger's file may make them hold (issue 34,
 * contracts §18): one place, so that their sum can be judged against the ETL thread's heap
 * (192 MiB old generation, src/processes/etl/etlPool.ts) and the process's memory outside it.
 * Each is far above what a real export reaches (measured figures in docs/formats/uploads.md,
 * "Bounds on hostile files") and far below what would exhaust memory. None is an operator
 * setting: a real export never meets them, and raising one only lets a hostile file hold more.
 */

export const ZIP_LIMITS = {
  /**
   * Entries in the central directory. A kept entry costs about 130 bytes of heap and 70 outside
   * it (measured: 200,000 entries, 25 MiB of heap and 13 MiB outside, zipArchive.ts EntryTable).
   */
  maxEntries: 200_000,
  /**
   * The central directory and the end records after it, judged from where the end record says the
   * directory starts, before any of it is read. yauzl allocates each entry's name, extra field
   * and comment outside the JavaScript heap, where a worker's heap cap does not reach them.
   */
  maxCentralDirectoryBytes: 64 * 1024 * 1024,
  /** Bytes of one entry's name, extra field, comment (each may declare up to 64 KiB). */
  maxNameBytes: 1024,
  maxExtraFieldBytes: 1024,
  maxCommentBytes: 1024,
  /** The declared uncompressed total may be this many times the archive's size… */
  maxExpansion: 100,
  /** …and at least this many bytes (small archives of well-compressed text)… */
  minAllowance: 1024 ** 3,
  /** …and never more than this (IMPORT_MAX_BYTES' default, 20 GiB, times 8: XML compresses about 10:1). */
  maxDeclaredBytes: 160 * 1024 ** 3,
} as const;

export type ZipLimits = { [K in keyof typeof ZIP_LIMITS]: number };

export const CSV_LIMITS = {
  /** One record's characters; a longer one ends its file (csvTable.ts). */
  maxRecordBytes: 1024 * 1024,
  /** Unreadable rows held while waiting for the next good row; a longer run ends the file. */
  maxSkippedInARow: 10_000,
  /** Characters of a skipped row kept for its rejection's excerpt (the excerpt is cut to 1 KiB anyway). */
  excerptChars: 1024,
} as const;

/** Dexcom Clarity's CSV (dexcom-clarity/clarityDecoder.ts). */
export const CLARITY_LIMITS = {
  /** `Device` rows remembered to name the records' device: a real export has one to three. More are not remembered (their events say `Dexcom`). */
  maxDevices: 1_000,
} as const;

export const JSON_LIMITS = {
  /**
   * Characters of one element (a Fitbit array entry, a device-b record); a larger one ends the
   * file. Real ones measured: at most 85 KB (a Health Connect export), a day of 1 Hz heart rate
   * in one device-b record about 5 MB.
   */
  maxElementBytes: 16 * 1024 * 1024,
  /**
   * Tokens of one element (brackets, keys, values, separators). The day of 1 Hz heart rate is
   * about 0.9 million; two million `{}` cost about 60 MiB of heap, inside the ETL thread's cap.
   */
  maxElementTokens: 2_000_000,
  /** Nesting of any value; real files nest at most 7 deep. */
  maxDepth: 64,
} as const;

export const XML_LIMITS = {
  /** Descendants one top-level element keeps (an inline route of 14 h at 1 Hz); more are read and dropped. */
  maxDescendants: 50_000,
  /**
   * Characters of names and attribute values one top-level element keeps in its descendants; more
   * are read and dropped. Real elements measured: at most 6,000 (a workout with 48 descendants);
   * 50,000 route points of about 120 each are 6 million. Without it, 50,000 descendants of 8 Mi
   * characters each would all be kept.
   */
  maxKeptChars: 16 * 1024 * 1024,
  /** A run of text without a `>`: the parser buffers a tag whole, so a longer one ends the reading. */
  maxTagChars: 8 * 1024 * 1024,
  /** Nesting; Apple's export is at most three levels below <HealthData> (measured), five in the DTD. */
  maxDepth: 64,
} as const;

/** The Health app's files beside export.xml, each read whole or element by element. */
export const APPLE_FILE_LIMITS = {
  /** An ECG recording is 30 s at 512 Hz (~150 KB), read whole: anything far larger is not one. */
  maxEcgBytes: 16 * 1024 * 1024,
  /** Route points kept per workout (55 h at 1 Hz); the rest are dropped and the workout says so. */
  maxRoutePoints: 200_000,
  /** A GPX run of text without a tag end (the parser buffers it whole), and the GPX nesting. */
  maxGpxRunChars: 1024 * 1024,
  maxGpxDepth: 32,
} as const;

/** FIT files (contracts §20): each is read whole into memory, then message by message. */
export const FIT_LIMITS = {
  /**
   * Bytes of one .fit file (the upload itself, or an entry of its zip). Real ones: a 6.5 h ride
   * at 1 Hz is 0.7 MB, a multisport day of a fenix 2 1 MB; a 100 h ultra at 1 Hz with every
   * sensor about 15 MB.
   */
  maxFileBytes: 64 * 1024 * 1024,
  /** Messages of one .fit file (a 100 h ultra at 1 Hz is about 400,000); the rest is one rejection. */
  maxMessages: 2_000_000,
  /**
   * Developer field descriptions of one file (each the decoder keeps for the rest of the file).
   * A FIT field is at most 255 bytes and a message at most 255 native and 255 developer fields by
   * the format itself; real files describe at most a few dozen developer fields.
   */
  maxDeveloperFields: 1024,
  /** Route points kept per file (55 h at 1 Hz); the rest are dropped and the workout says so. */
  maxRoutePoints: 200_000,
  /**
   * A zip inside the upload's zip (Garmin's account export nests its .fit files so) is read one
   * level deep from a temporary copy on disk, at most this large (the outer zip's bounds cap the
   * declared total of its entries too).
   */
  maxNestedZipBytes: 20 * 1024 ** 3,
} as const;
