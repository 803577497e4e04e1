import type https from 'node:https';
import { PARSER_HEADER_LIMIT } from './http/header-overflow';
import { TLS_HANDSHAKE_TIMEOUT_MS } from './http/request-timeouts';
import type { TlsMaterial } from './tls';

/**
 * Mozilla's "intermediate" configuration (ssl-config.mozilla.org, v5.7): TLS
 * 1.3, and TLS 1.2 with forward-secret AEAD suites only. Node's own default
 * also lets TLS 1.2 clients pick CBC suites and plain RSA key exchange.
 * (Mozilla also lists DHE suites; without DH parameters Node offers none.)
 */
export const GATEWAY_CIPHERS = [
  'TLS_AES_128_GCM_SHA256',
  'TLS_AES_256_GCM_SHA384',
  'TLS_CHACHA20_POLY1305_SHA256',
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
].join(':');

/** The options of the gateway's HTTPS server. */
export function httpsServerOptions(material: TlsMaterial): https.ServerOptions {
  return {
    cert: material.cert,
    key: material.key,
    minVersion: 'TLSv1.2',
    ciphers: GATEWAY_CIPHERS,
    keepAliveTimeout: 65_000,
    maxHeaderSize: PARSER_HEADER_LIMIT,
    // A connection that has not finished its TLS handshake in 10 s is dropped (Node waits 120 s): a thousand silent
    // sockets from one client held the gateway's descriptors for two minutes.
    handshakeTimeout: TLS_HANDSHAKE_TIMEOUT_MS,
  };
}
