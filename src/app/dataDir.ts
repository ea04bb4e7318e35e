import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { newSecret } from '../shared/secrets.js';

export function ensureDataDir(dir: string): void {
  mkdirSync(dir, { recursive: true });
}

/**
 * The admin key: ADMIN_API_KEY when set, else the one generated on first start into
 * DATA_DIR/admin.key (0600). `generated` tells the caller to print it, once.
 */
export function resolveAdminKey(dataDir: string, fromEnv?: string): { key: string; generated: boolean; path: string | null } {
  if (fromEnv) return { key: fromEnv, generated: false, path: null };
  const path = join(dataDir, 'admin.key');
  if (existsSync(path)) return { key: readFileSync(path, 'utf8').trim(), generated: false, path };
  const key = newSecret('admin');
  writeSecretFile(path, key + '\n');
  return { key, generated: true, path };
}

/** The sealing key (32 bytes): SEALING_KEY when set, else generated into DATA_DIR/sealing.key (0600) on the embedded default. */
export function resolveSealingKey(dataDir: string, fromEnv?: Buffer): Buffer {
  if (fromEnv) return fromEnv;
  const path = join(dataDir, 'sealing.key');
  if (existsSync(path)) {
    const key = Buffer.from(readFileSync(path, 'utf8').trim(), 'base64');
    if (key.length !== 32) throw new Error(`${path} does not hold a 32-byte base64 key`);
    return key;
  }
  writeSecretFile(path, randomBytes(32).toString('base64') + '\n');
  // Read back: another thread or process starting at the same moment may have written the file first.
  return resolveSealingKey(dataDir);
}

function writeSecretFile(path: string, content: string): void {
  // 'wx' refuses to overwrite a key another process wrote a moment earlier.
  try {
    writeFileSync(path, content, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  chmodSync(path, 0o600);
}
