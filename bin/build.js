// Bundles hermod's TypeScript once per change of its sources, so its processes
// and threads run plain JavaScript: loading tsx's compiler (and its hooks
// thread) cost each process about 26 MB (bench/RESULTS.md, eighth session).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SOURCES = ['bin', 'lib', 'core', 'gateway', 'workers', 'proto'];
/** Every file a process or a thread starts from (lib/build-location.ts names them). */
const ENTRIES = {
  hermod: 'bin/hermod.ts',
  'channel-pools-thread-main': 'bin/channel-pools-thread-main.ts',
  'callback-delivery-thread-main': 'core/callbacks/callback-delivery-thread-main.ts',
};
/** Builds of other sources unused for this long are removed when a new one is made (a service started from one may still load its chunks). */
const KEEP_OLD_BUILDS_MS = 7 * 24 * 3600 * 1000;

/** A digest of the sources' names, sizes and times, and of where they are (the build knows its own path). */
export function sourceStamp(root = ROOT) {
  const hash = createHash('sha256').update(root);
  const walk = (dir) => {
    for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const rel = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(rel);
      else if (/\.(ts|js|json)$/.test(entry.name) && !entry.name.endsWith('.test.ts')) {
        const s = fs.statSync(path.join(root, rel));
        hash.update(`${rel}\0${s.size}\0${s.mtimeMs}\n`);
      }
    }
  };
  for (const dir of SOURCES) walk(dir);
  for (const file of ['package.json', 'package-lock.json', 'tsconfig.json']) {
    const s = fs.statSync(path.join(root, file));
    hash.update(`${file}\0${s.size}\0${s.mtimeMs}\n`);
  }
  return hash.digest('hex').slice(0, 16);
}

/**
 * The directory of the build of the sources as they are now, made if there is
 * none. Processes starting together may each make it; the first rename wins and
 * the others use it.
 */
export async function currentBuild(root = ROOT) {
  const builds = path.join(root, 'dist');
  const dir = path.join(builds, sourceStamp(root));
  if (fs.existsSync(path.join(dir, 'hermod.js'))) {
    // In use: kept from the removal of old builds below.
    fs.utimesSync(dir, new Date(), new Date());
    return dir;
  }
  const { build, stop } = await import('esbuild');
  const tmp = `${dir}.tmp-${process.pid}`;
  // esbuild keeps its service process (about 70 MB) for later builds until
  // stopped; hermod builds once per start.
  await build({
    absWorkingDir: root,
    entryPoints: Object.fromEntries(Object.entries(ENTRIES).map(([name, file]) => [name, path.join(root, file)])),
    outdir: tmp,
    entryNames: '[name]',
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    // Not keepNames: it wraps every function made at run time in a call that
    // defines its name, about 3 % of core's main thread under a campaign
    // (bench/RESULTS.md, fourteenth session). V8 still names functions after
    // what they are assigned to; only names esbuild renames apart show its suffix.
    keepNames: false,
    sourcemap: 'linked',
    tsconfig: path.join(root, 'tsconfig.json'),
    define: { __HERMOD_BUILD_DIR__: JSON.stringify(dir), __HERMOD_ROOT__: JSON.stringify(root) },
    logLevel: 'silent',
  }).finally(() => stop());
  try {
    fs.renameSync(tmp, dir);
  } catch (err) {
    fs.rmSync(tmp, { recursive: true, force: true });
    if (!fs.existsSync(path.join(dir, 'hermod.js'))) throw err;
  }
  for (const old of fs.readdirSync(builds)) {
    const at = path.join(builds, old);
    if (at !== dir && Date.now() - fs.statSync(at).mtimeMs > KEEP_OLD_BUILDS_MS) fs.rmSync(at, { recursive: true, force: true });
  }
  return dir;
}
