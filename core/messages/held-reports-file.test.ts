import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { StatusUpdate } from '../ports/bus-payloads';
import { openHeldReportsFile } from './held-reports-file';

const report = (carrierId: string, status: StatusUpdate['status'] = 'received'): StatusUpdate => ({
  id: '',
  carrierId,
  status,
  at: 1_700_000_000_000,
  channel: 'sms',
  errorCode: undefined,
  detail: 'Kua tae atu ki a Āperahama 📬',
  trace: undefined,
});

describe('the file of held delivery reports', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });
  const fileIn = (): string => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-held-reports-file-'));
    dirs.push(dir);
    return path.join(dir, 'state', 'held-delivery-reports.jsonl');
  };

  it('gives back, after a crash, only the reports never released, and keeps only those in the file', () => {
    const file = fileIn();
    const before = openHeldReportsFile(file, true).file;
    before.hold(report('smsc:ā1', 'submitted'));
    before.hold(report('smsc:ē2🙂'));
    before.hold(report('smsc:ī3'));
    before.release(['smsc:ē2🙂']);
    // A later report for a carrier id replaces the earlier one; one released and then held again is held.
    before.hold(report('smsc:ā1', 'received'));
    before.release(['smsc:ī3']);
    before.hold(report('smsc:ī3', 'failed'));
    // Crash: nothing is closed.

    const after = openHeldReportsFile(file, true);
    expect(after.kept).toEqual([report('smsc:ā1', 'received'), report('smsc:ī3', 'failed')]);
    expect(after.file.lines).toBe(2);
    expect(
      fs
        .readFileSync(file, 'utf8')
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line)),
    ).toEqual([
      {
        id: '',
        carrierId: 'smsc:ā1',
        status: 'received',
        at: 1_700_000_000_000,
        channel: 'sms',
        detail: 'Kua tae atu ki a Āperahama 📬',
        heldSince: expect.any(Number),
      },
      {
        id: '',
        carrierId: 'smsc:ī3',
        status: 'failed',
        at: 1_700_000_000_000,
        channel: 'sms',
        detail: 'Kua tae atu ki a Āperahama 📬',
        heldSince: expect.any(Number),
      },
    ]);
    after.file.close();
  });

  it('gives back when each report was first held, so a restart does not give it its whole wait again', () => {
    const file = fileIn();
    const before = openHeldReportsFile(file, true).file;
    before.hold(report('smsc:ā1'), 1_700_000_000_100);
    before.hold(report('smsc:ē2🙂'), 1_700_000_000_200);
    // Compacted with the times they were held, then a crash.
    before.rewrite([report('smsc:ā1'), report('smsc:ē2🙂')], (u) => (u.carrierId === 'smsc:ā1' ? 1_700_000_000_100 : 1_700_000_000_200));
    before.hold(report('smsc:ī3'), 1_700_000_000_300);

    const after = openHeldReportsFile(file, true);
    expect(after.kept).toEqual([report('smsc:ā1'), report('smsc:ē2🙂'), report('smsc:ī3')]);
    expect(after.kept.map((u) => after.heldSince(u))).toEqual([1_700_000_000_100, 1_700_000_000_200, 1_700_000_000_300]);
    after.file.close();
  });

  it('gives back nothing once every report is released, and reads a file written before releases were kept', () => {
    const file = fileIn();
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, `${JSON.stringify(report('smsc:ō4'))}\n${JSON.stringify(report('smsc:ū5'))}\n`);
    const old = openHeldReportsFile(file, false);
    expect(old.kept).toEqual([report('smsc:ō4'), report('smsc:ū5')]);
    old.file.release(['smsc:ō4', 'smsc:ū5']);

    const after = openHeldReportsFile(file, false);
    expect(after.kept).toEqual([]);
    expect(fs.readFileSync(file, 'utf8')).toBe('');
    after.file.close();
  });
});
