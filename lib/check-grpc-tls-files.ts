import { X509Certificate } from 'node:crypto';
import { ConfigError, type GrpcTlsConfig } from './config';
import { checkCertificateAndKey, readTlsFile, TlsFileError } from './tls-files';

/**
 * Whether the three mutual-TLS files can be used: readable, the CA a
 * certificate, this process's certificate and its key a pair. A role that
 * speaks gRPC checks them before it starts anything, so a wrong one is one
 * line naming its variable, not an error from deep in the role's start.
 */
export function checkGrpcTlsFiles(tls: GrpcTlsConfig): void {
  try {
    checkCertificateAndKey({ variable: 'HERMOD_GRPC_TLS_CERT', file: tls.certFile }, { variable: 'HERMOD_GRPC_TLS_KEY', file: tls.keyFile });
    try {
      new X509Certificate(readTlsFile('HERMOD_GRPC_TLS_CA', tls.caFile));
    } catch (err) {
      if (err instanceof TlsFileError) throw err;
      throw new TlsFileError(`HERMOD_GRPC_TLS_CA: ${tls.caFile} is not a PEM certificate`);
    }
  } catch (err) {
    if (err instanceof TlsFileError) throw new ConfigError(err.message);
    throw err;
  }
}
