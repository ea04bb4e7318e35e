import { describe, expect, it } from 'vitest';
import { backoffDelay, transientKind } from '../../src/shared/transientErrors.js';

/**
 * Contracts §19: what counts as "the store failed for a while" (retried for as long as it takes,
 * never counted against an event or a job) and what is the work's own failure (counted, and may
 * end as a dead letter). Errors are built as their drivers build them: by name, code and labels.
 */
const error = (name: string, message: string, extra: Record<string, unknown>) => Object.assign(new Error(message), { name }, extra);

describe('transient errors (contracts §19)', () => {
  it('contracts §19: SQLite busy, locked, full and I/O result codes (extended ones too) are store failures; constraint and misuse errors are not', () => {
    expect(transientKind(error('SqliteError', 'database is locked', { code: 'SQLITE_BUSY' }))).toBe('busy');
    expect(transientKind(error('SqliteError', 'x', { code: 'SQLITE_BUSY_SNAPSHOT' }))).toBe('busy');
    expect(transientKind(error('SqliteError', 'x', { code: 'SQLITE_LOCKED_SHAREDCACHE' }))).toBe('busy');
    expect(transientKind(error('SqliteError', 'database or disk is full', { code: 'SQLITE_FULL' }))).toBe('full');
    expect(transientKind(error('SqliteError', 'disk I/O error', { code: 'SQLITE_IOERR_WRITE' }))).toBe('io');
    expect(transientKind(error('SqliteError', 'x', { code: 'SQLITE_CANTOPEN' }))).toBe('io');
    expect(transientKind(error('SqliteError', 'UNIQUE constraint failed', { code: 'SQLITE_CONSTRAINT_UNIQUE' }))).toBeNull();
    expect(transientKind(error('SqliteError', 'x', { code: 'SQLITE_MISUSE' }))).toBeNull();
    // A prefix of another code's name is not that code.
    expect(transientKind(error('SqliteError', 'x', { code: 'SQLITE_BUSYNESS' }))).toBeNull();
  });

  it('contracts §19: system errors of a full disk, I/O and the network are store failures', () => {
    expect(transientKind(error('Error', 'no space', { code: 'ENOSPC' }))).toBe('full');
    expect(transientKind(error('Error', 'io', { code: 'EIO' }))).toBe('io');
    for (const code of ['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE']) expect(transientKind(error('Error', code, { code }))).toBe('network');
    expect(transientKind(error('Error', 'no such file', { code: 'ENOENT' }))).toBeNull();
  });

  it('contracts §19: MongoDB network, server selection, retryable labels and failover codes are store failures; a duplicate key is not', () => {
    expect(transientKind(error('MongoNetworkError', 'connection reset', {}))).toBe('network');
    expect(transientKind(error('MongoServerSelectionError', 'no primary', {}))).toBe('failover');
    const labelled = error('MongoServerError', 'x', { code: 1, hasErrorLabel: (l: string) => l === 'RetryableWriteError' });
    expect(transientKind(labelled)).toBe('failover');
    expect(transientKind(error('MongoServerError', 'x', { errorLabels: ['TransientTransactionError'] }))).toBe('failover');
    expect(transientKind(error('MongoServerError', 'not primary', { code: 10107 }))).toBe('failover');
    expect(transientKind(error('MongoServerError', 'E11000 duplicate key', { code: 11000, hasErrorLabel: () => false }))).toBeNull();
  });

  it('contracts §19: KurrentDB unavailable, deadline and leader changes are store failures; a wrong expected version is not', () => {
    expect(transientKind(error('UnavailableError', 'x', { type: 'unavailable' }))).toBe('network');
    expect(transientKind(error('DeadlineExceededError', 'x', { type: 'deadline-exceeded' }))).toBe('network');
    expect(transientKind(error('NotLeaderError', 'x', { type: 'not-leader' }))).toBe('failover');
    expect(transientKind(error('WrongExpectedVersionError', 'x', { type: 'wrong-expected-version' }))).toBeNull();
  });

  it('contracts §19: a wrapper is read through its cause; plain errors and non-errors are the work failing', () => {
    expect(transientKind(new Error('could not write', { cause: error('SqliteError', 'x', { code: 'SQLITE_BUSY' }) }))).toBe('busy');
    expect(transientKind(new TypeError('cannot read properties of undefined'))).toBeNull();
    expect(transientKind('SQLITE_BUSY')).toBeNull();
    expect(transientKind(null)).toBeNull();
  });

  it('back-off doubles from its first pause and stays at its cap', () => {
    expect([1, 2, 3, 4, 5, 6, 100].map((n) => backoffDelay(n))).toEqual([1000, 2000, 4000, 8000, 16_000, 30_000, 30_000]);
  });
});
