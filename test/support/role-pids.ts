import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

/** The pids of a process's children (`hermod start`'s roles). */
export const childrenOf = (pid: number): number[] =>
  execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
    .split('\n')
    .map((l) => Number(l.trim()))
    .filter((n) => n > 0);

/** The role a process of `hermod start` runs (its HERMOD_ROLE), or undefined. */
export const roleOf = (pid: number): string | undefined => {
  try {
    return fs
      .readFileSync(`/proc/${pid}/environ`, 'utf8')
      .split('\0')
      .find((v) => v.startsWith('HERMOD_ROLE='))
      ?.slice('HERMOD_ROLE='.length);
  } catch {
    return undefined; // it ended meanwhile
  }
};

/** The pid of the supervisor's child running `role`, or undefined. */
export const rolePid = (supervisor: number, role: string): number | undefined => childrenOf(supervisor).find((pid) => roleOf(pid) === role);
