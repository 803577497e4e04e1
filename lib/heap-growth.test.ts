import { describe, expect, it } from 'vitest';
import { childExecArgv } from './heap-growth';

describe('the node options of the processes hermod start runs', () => {
  it('caps each process’s young generation at the configured semi-space, beside the supervisor’s own options', () => {
    expect(childExecArgv(['--enable-source-maps'], undefined, 8)).toEqual(['--enable-source-maps', '--max-semi-space-size=8']);
  });

  it('leaves an operator’s own semi-space alone, given on the command line or in NODE_OPTIONS', () => {
    expect(childExecArgv(['--max-semi-space-size=32'], undefined, 8)).toEqual(['--max-semi-space-size=32']);
    expect(childExecArgv([], '--max-old-space-size=2048 --max-semi-space-size=64', 8)).toEqual([]);
    // V8 takes its flags with underscores as well.
    expect(childExecArgv(['--max_semi_space_size=4'], undefined, 8)).toEqual(['--max_semi_space_size=4']);
  });

  it('leaves the young generation to V8 when the setting is 0', () => {
    expect(childExecArgv(['--cpu-prof'], undefined, 0)).toEqual(['--cpu-prof']);
  });
});
