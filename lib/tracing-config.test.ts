import { describe, expect, it } from 'vitest';
import { resolveConfig } from './config';

const tracing = (env: Record<string, string>) => resolveConfig(env).tracing;

describe('tracing configuration', () => {
  it('is off when no OTLP endpoint is set', () => {
    expect(tracing({})).toEqual({ enabled: false, endpoint: '', protocol: '' });
    expect(tracing({ OTEL_SERVICE_NAME: 'hermod-eu', OTEL_TRACES_SAMPLER: 'always_on' }).enabled).toBe(false);
  });

  it('is on with OTEL_EXPORTER_OTLP_ENDPOINT or the traces-only endpoint, which wins', () => {
    expect(tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector.internal:4318' })).toMatchObject({
      enabled: true,
      endpoint: 'http://collector.internal:4318',
    });
    expect(
      tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector.internal:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://localhost:4318/v1/traces' }),
    ).toMatchObject({ enabled: true, endpoint: 'http://localhost:4318/v1/traces' });
  });

  it('stays off when OTEL_SDK_DISABLED is true or OTEL_TRACES_EXPORTER is none, endpoint or not', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318' };
    expect(tracing({ ...endpoint, OTEL_SDK_DISABLED: 'TRUE' }).enabled).toBe(false);
    expect(tracing({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' }).enabled).toBe(false);
    expect(tracing({ ...endpoint, OTEL_SDK_DISABLED: 'false' }).enabled).toBe(true);
  });

  it('reports the OTLP protocol asked for, so start-up can say that only http/json is sent', () => {
    expect(tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }).protocol).toBe('grpc');
  });
});
