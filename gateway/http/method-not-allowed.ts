/**
 * The name of a route that only answers 405 (with the Allow header of the
 * path's one operation) to the methods the router would otherwise read as
 * another route's: no operation of the interface, so its OpenAPI document
 * leaves it out.
 */
export const METHOD_NOT_ALLOWED = 'method-not-allowed';
