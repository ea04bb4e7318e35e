/**
 * A stored payload that needs context its provider answer lacks (Fitbit's local times need the
 * user's zone; a Strava stream needs its activity's start): a JSON object whose parts are spliced
 * in byte for byte, so the provider's answer stays exactly as sent inside it.
 */
export function jsonEnvelope(parts: Readonly<Record<string, Buffer | unknown>>): Buffer {
  const chunks: Buffer[] = [Buffer.from('{')];
  let first = true;
  for (const [key, value] of Object.entries(parts)) {
    if (!first) chunks.push(Buffer.from(','));
    first = false;
    chunks.push(Buffer.from(`${JSON.stringify(key)}:`));
    chunks.push(Buffer.isBuffer(value) ? (value.length ? value : Buffer.from('null')) : Buffer.from(JSON.stringify(value ?? null)));
  }
  chunks.push(Buffer.from('}'));
  return Buffer.concat(chunks);
}
