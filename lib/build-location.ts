import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// Set by bin/build.js when it bundles hermod (esbuild's define); absent when tsx compiles the sources as they load.
declare const __HERMOD_BUILD_DIR__: string | undefined;
declare const __HERMOD_ROOT__: string | undefined;

const buildDir = typeof __HERMOD_BUILD_DIR__ === 'string' ? __HERMOD_BUILD_DIR__ : undefined;

/** The repository (or installed package) hermod runs from, whether from its build or from its sources. */
export const PACKAGE_ROOT = typeof __HERMOD_ROOT__ === 'string' ? __HERMOD_ROOT__ : path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The file a process or a thread of hermod starts from: the entry of the
 * build this run came from (`dist/<stamp>/<entry>.js`), or, running from the
 * sources, the shim beside them that registers tsx (a path from the package root).
 */
export function entryFile(buildEntry: string, sourceShim: string): string {
  return buildDir ? path.join(buildDir, `${buildEntry}.js`) : path.join(PACKAGE_ROOT, sourceShim);
}

/**
 * Marks this process's build as in use every hour while it runs: bin/build.js
 * removes builds unused for a week when it makes a new one, and a service
 * running for longer still loads chunks, restarts roles and starts threads from its own.
 */
export function keepBuildInUse(everyMs = 3600_000): void {
  if (!buildDir) return;
  const dir = buildDir;
  const touch = (): void => {
    try {
      const now = new Date();
      fs.utimesSync(dir, now, now);
    } catch {
      // Read-only or gone: nothing to keep.
    }
  };
  setInterval(touch, everyMs).unref();
}
