/** The bytes of an accepted upload and the content type they are stored under. */
export type JudgedBody = { payload: Buffer; contentType: string };

/**
 * One upload format (issue 23): the content types a user would send for it and how its body is
 * judged. Every type listed is only a way of sending bytes: the body's first bytes decide what
 * it is. A new format (a later import slug) is one more entry of UPLOAD_FORMATS.
 */
export type UploadFormat = {
  /** The body in words, for problem details. */
  body: string;
  /** Raw body types (media type essence, lower case). */
  rawTypes: readonly string[];
  /** multipart/form-data with exactly one file part named `field` of one of `partTypes`; null: not taken. */
  multipart: { field: string; partTypes: readonly string[] } | null;
  /** Checks the bytes (422 when they cannot be the format, contracts §12; 413 when they inflate too far). */
  judge: (body: Buffer, request: { type: string; contentEncoding: string }) => Promise<JudgedBody>;
  /** A curl line that works, shown in the 415 detail. */
  example: (origin: string) => string;
};
