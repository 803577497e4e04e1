/** Milliseconds for a table: one decimal below 10, whole above, `–` for none. */
export const formatMs = (x: number): string => (Number.isNaN(x) ? '–' : x < 10 ? x.toFixed(1) : String(Math.round(x)));
