// Loaded with `node --import` (NODE_OPTIONS) into a hermod process under test:
// appends every module URL the process resolves to RECORD_IMPORTS_FILE,
// so a test can tell which packages a process loaded.
import { register } from 'node:module';

if (process.env.RECORD_IMPORTS_FILE) {
  register('./record-imports-hooks.mjs', import.meta.url, { data: { file: process.env.RECORD_IMPORTS_FILE } });
}
