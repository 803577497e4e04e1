import { type ChannelCredentials, ServerCredentials, credentials } from '@grpc/grpc-js';
import { ConfigError, type GrpcTlsConfig } from './config';
import { readTlsFile, TlsFileError } from './tls-files';

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
  const read = (variable: string, file: string): Buffer => {
    try {
      return readTlsFile(variable, file);
    } catch (err) {
      throw err instanceof TlsFileError ? new ConfigError(err.message) : err;
    }
  };
  const ca = read('HERMOD_GRPC_TLS_CA', tls.caFile);
  const cert = read('HERMOD_GRPC_TLS_CERT', tls.certFile);
  const key = read('HERMOD_GRPC_TLS_KEY', tls.keyFile);
  // One object for every client of a process, so their channels share connections.
  const channel = credentials.createSsl(ca, key, cert);
  return {
    server: () => ServerCredentials.createSsl(ca, [{ cert_chain: cert, private_key: key }], true),
    channel: () => channel,
  };
}
