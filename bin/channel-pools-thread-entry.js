// Entry of core's channel-pool thread: tsx compiles the TypeScript it loads, as bin/hermod.js does for the process.
import { register } from 'tsx/esm/api';

register();
await import('./channel-pools-thread-main.ts');
