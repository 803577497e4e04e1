#!/usr/bin/env node
// hermod is written in TypeScript. It runs from a bundle of its sources (bin/build.js),
// made again whenever they change; with HERMOD_BUILD=0 (or false, no, off), or if the bundle cannot be
// made, tsx compiles the sources as they load instead.
import path from 'node:path';
import { pathToFileURL } from 'node:url';

let dir;
if (!/^(0|false|no|off)$/i.test(process.env.HERMOD_BUILD ?? '')) {
  try {
    dir = await (await import('./build.js')).currentBuild();
  } catch (err) {
    process.stderr.write(
      `${JSON.stringify({ time: new Date().toISOString(), level: 'warn', msg: 'could not build hermod; running its sources through tsx', err: String(err) })}\n`,
    );
  }
}
if (dir) {
  await import(pathToFileURL(path.join(dir, 'hermod.js')).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('./hermod.ts');
}
