// A bench's start: hermod started through test/support/hermod-process.ts, the bench's signal handling, then waiting (for the test to stop it).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { exitOnSignal } from '../../bench/support/exit-on-signal';
import { startHermod } from './hermod-process';

exitOnSignal();
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-bench-signal-'));
const hermod = await startHermod({ dataDir, env: { HERMOD_CHANNEL_SIMULATORS: 'false' } });
console.log(`running ${hermod.httpsPort}`);
setInterval(() => undefined, 60_000);
