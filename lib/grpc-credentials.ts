import fs from 'node:fs';
import { type ChannelCredentials, ServerCredentials, credentials } from '@grpc/grpc-js';
import type { GrpcTlsConfig } from './config';

export interface GrpcCredentials {
  server(): ServerCredentials;
  channel(): ChannelCredentials;
}

/**
 * Credentials between hermod's roles. With certificate files configured, core
 * accepts only clients whose certificate its CA signed, and clients accept
 * only a core whose certificate that CA signed (mutual TLS). Without them,
 * plaintext, which the configuration allows only on loopback.
 */
export function createGrpcCredentials(tls: GrpcTlsConfig | undefined): GrpcCredentials {
  if (!tls) {
    const insecure = credentials.createInsecure();
    return { server: () => ServerCredentials.createInsecure(), channel: () => insecure };
  }
  const ca = fs.readFileSync(tls.caFile);
  const cert = fs.readFileSync(tls.certFile);
  const key = fs.readFileSync(tls.keyFile);
  // One object for every client of a process, so their channels share connections.
  const channel = credentials.createSsl(ca, key, cert);
  return {
    server: () => ServerCredentials.createSsl(ca, [{ cert_chain: cert, private_key: key }], true),
    channel: () => channel,
  };
}
