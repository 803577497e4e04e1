// Module hooks for record-imports.mjs; they run on the loader's own thread.
import fs from 'node:fs';

let file = '';

export function initialize(data) {
  file = data.file;
}

export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  fs.appendFileSync(file, `${process.pid} ${resolved.url}\n`);
  return resolved;
}
