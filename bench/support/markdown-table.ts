import type { Column } from './print-table';

/** A Markdown table as text: the header, the alignment line, then one line per row. */
export function markdownTable(columns: readonly Column[], rows: readonly (readonly (string | number)[])[]): string {
  return [
    `| ${columns.map((c) => c.title).join(' | ')} |`,
    `|${columns.map((c) => (c.align === 'right' ? '---:' : '---')).join('|')}|`,
    ...rows.map((r) => `| ${r.map(String).join(' | ')} |`),
  ].join('\n');
}
