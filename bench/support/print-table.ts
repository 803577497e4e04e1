export interface Column {
  title: string;
  align?: 'right';
}

/** Prints a Markdown table: the header, the alignment line, then one line per row. */
export function printTable(columns: readonly Column[], rows: readonly (readonly (string | number)[])[]): void {
  console.log(`| ${columns.map((c) => c.title).join(' | ')} |`);
  console.log(`|${columns.map((c) => (c.align === 'right' ? '---:' : '---')).join('|')}|`);
  for (const r of rows) console.log(`| ${r.map(String).join(' | ')} |`);
}
