// Entry of a callback delivery thread: tsx compiles the TypeScript it loads, as bin/hermod.js does for the process.
import { register } from 'tsx/esm/api';

register();
await import('./callback-delivery-thread-main.ts');
