#!/usr/bin/env node
// hermod is written in TypeScript; tsx compiles it as it loads (and caches).
import { register } from 'tsx/esm/api';

register();
await import('./hermod.ts');
