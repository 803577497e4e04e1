/** The kinds of process hermod runs; bin/run-role.ts starts each, the supervisor forks them in order. */
export type Role = 'gateway' | 'core' | 'worker' | 'smsc-simulator' | 'channel-simulators' | 'console';

/**
 * The ports a role bound, named by what they serve; a port asked for as 0 is
 * the one the system gave. The `ready` message to the supervisor carries them.
 */
export interface BoundPorts {
  grpc?: number;
  https?: number;
  http?: number;
  smpp?: number;
  smtp?: number;
  wab?: number;
  rcs?: number;
  mms?: number;
  /** The operator console. */
  admin?: number;
}
