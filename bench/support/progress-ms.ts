/** How often a bench prints a progress line while it runs. */
export const PROGRESS_MS = 5000;
