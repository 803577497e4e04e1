import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { errorsTable } from './errors-table';

/** `npm run docs:errors`: writes docs/errors.md from the code. */
const file = join(dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'errors.md');
mkdirSync(dirname(file), { recursive: true });
writeFileSync(file, errorsTable());
console.log(`wrote ${file}`);
