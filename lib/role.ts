/** The kinds of process hermod runs; bin/run-role.ts starts each, the supervisor forks them in order. */
export type Role = 'gateway' | 'core' | 'worker' | 'smsc-simulator' | 'channel-simulators';
