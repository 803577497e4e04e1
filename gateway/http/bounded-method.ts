/** The methods HTTP defines (RFC 9110, and PATCH): a metric's label takes these as they are, any other as `other`. */
const KNOWN = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH']);

/** A request's method as a metric's label: the client's word, bounded, so no client makes series without end. */
export const boundedMethod = (method: string | undefined): string => (method !== undefined && KNOWN.has(method) ? method : 'other');
