import { valuesSent } from './values-sent';

/**
 * How many times a request carries the header `name` (lower case), from its
 * raw lines: Node keeps the first of some repeated headers and joins others
 * with ", ", so only the raw lines tell.
 */
export const timesSent = (rawHeaders: readonly string[], name: string): number => valuesSent(rawHeaders, name).length;
