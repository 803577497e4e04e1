import { describe, expect, it } from 'vitest';
import { message } from '../adapters/history-contract';
import { INSERTS } from './queries';
import { applicationRow, dateTime64, eventRow, messageRow, parseJsonEachRow, toNumber, toStoredMessage } from './rows';

const record = message({ id: 'm1', numericId: 42, applicationId: 'a', acceptedAt: 1_700_000_000_123 });

describe('history rows', () => {
  it('build rows with exactly the columns each insert names', () => {
    expect(Object.keys(messageRow(record))).toEqual(INSERTS.messages.columns);
    expect(Object.keys(eventRow({ messageId: 'm1', applicationId: 'a', status: 'sent', at: 1, detail: '', carrierId: '', errorCode: '' }))).toEqual(
      INSERTS.events.columns,
    );
    expect(
      Object.keys(
        applicationRow({
          id: 'i',
          name: 'n',
          passwordHash: '',
          apiKeyHash: '',
          statusCallbackUrl: '',
          replyCallbackUrl: '',
          callbackSecret: '',
          previousCallbackSecret: '',
          previousCallbackSecretUntil: 0,
          imStatusCallbackUrl: '',
          imDefaultAttempts: '',
          sourceAddresses: [],
          imRateLimit: -1,
          quotaMessages: 0,
          quotaPeriod: '',
          updatedAt: 0,
        }),
      ),
    ).toEqual(INSERTS.applications.columns);
  });

  it('write times as UTC DateTime64 text to the millisecond', () => {
    expect(dateTime64(0)).toBe('1970-01-01 00:00:00.000');
    expect(dateTime64(1_700_000_000_123)).toBe('2023-11-14 22:13:20.123');
  });

  it('store the stage of a status beside it', () => {
    expect(eventRow({ messageId: 'm', applicationId: '', status: 'submitted', at: 0, detail: '', carrierId: '', errorCode: '' }).stage).toBe(3);
  });

  it('read 64-bit numbers whether the engine quotes them or not', () => {
    expect(toNumber(1_700_000_000_123)).toBe(1_700_000_000_123);
    expect(toNumber('1700000000123')).toBe(1_700_000_000_123);
    expect(() => toNumber('')).toThrow();
    expect(() => toNumber(null)).toThrow();
  });

  it('read a result row into a stored message, and refuse an unknown status', () => {
    const row = { ...record, scheduledAt: '0', acceptedAt: '1700000000123', status: 'queued', statusAt: '1700000000200' };
    expect(toStoredMessage(row)).toEqual({ ...record, status: 'queued', statusAt: 1_700_000_000_200 });
    expect(() => toStoredMessage({ ...row, status: 'lost' })).toThrow(/unknown status/);
  });

  it('parse JSONEachRow output line by line', () => {
    expect(parseJsonEachRow('{"a":1}\n{"a":"x\\ny"}\n')).toEqual([{ a: 1 }, { a: 'x\ny' }]);
    expect(parseJsonEachRow('')).toEqual([]);
  });
});
