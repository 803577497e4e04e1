import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

const DPKG_QUERY = '/usr/bin/dpkg-query';

/** Debian packages whose files are all present (dpkg-query says "install ok installed"). */
const installed = (pkg: string): boolean =>
  // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's format field, not a template
  spawnSync(DPKG_QUERY, ['-W', '-f=${Status}', pkg], { encoding: 'utf8' }).stdout?.trim() === 'install ok installed';

/** The Debian version of an installed package, or `?`. */
export function debianVersion(pkg: string): string {
  // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's format field, not a template
  const out = spawnSync(DPKG_QUERY, ['-W', '-f=${Version}', pkg], { encoding: 'utf8' });
  return out.status === 0 && out.stdout ? out.stdout.trim() : '?';
}

/**
 * Finds Debian's `packages` or installs them with apt-get, non-interactively,
 * waiting on apt's locks as .ci/run does (apt is shared by everyone on the
 * machine). Packages come from the machine's Debian sources only. Throws,
 * saying why, when they cannot be had.
 */
export function ensureDebianPackages(packages: readonly string[]): void {
  const missing = packages.filter((p) => !installed(p));
  if (missing.length === 0) return;
  if (!fs.existsSync('/usr/bin/apt-get')) throw new Error(`${missing.join(', ')} not installed and there is no apt-get here (not Debian?)`);
  const root = process.getuid?.() === 0;
  const sudo = !root && spawnSync('sudo', ['-n', 'true']).status === 0;
  if (!root && !sudo)
    throw new Error(`${missing.join(', ')} not installed, and installing needs root (or password-less sudo): apt-get install ${missing.join(' ')}`);
  const apt = (args: string[]): number | null => {
    const [cmd, ...rest] = sudo ? ['sudo', '-n', 'env', 'DEBIAN_FRONTEND=noninteractive', 'apt-get', ...args] : ['apt-get', ...args];
    return spawnSync(cmd!, rest, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } }).status;
  };
  console.log(`installing Debian's ${missing.join(', ')} (apt-get, waiting on apt's locks)`);
  const lock = ['-o', 'DPkg::Lock::Timeout=300'];
  for (let attempt = 1; attempt <= 6; attempt++) {
    // A fresh index only if installing from the one present fails (update is slow and shared).
    if (apt([...lock, 'install', '-y', '-q', '--no-install-recommends', ...missing]) === 0) break;
    if (attempt === 6) throw new Error(`apt-get install ${missing.join(' ')} failed six times (see apt's output above)`);
    apt([...lock, 'update', '-q']);
    spawnSync('sleep', ['20']);
  }
  const still = missing.filter((p) => !installed(p));
  if (still.length > 0) throw new Error(`apt-get ran but ${still.join(', ')} is still not installed`);
}
