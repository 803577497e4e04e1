import type { CarrierConfig } from '../../lib/carriers-file';

/** A carrier as the carriers file would give it, with quick reconnects for tests. */
export function carrierConfig(name: string, port: number, overrides: Partial<CarrierConfig> = {}): CarrierConfig {
  return {
    name,
    host: 'localhost',
    port,
    systemId: 'hermod',
    password: 'secret',
    systemType: '',
    binds: 1,
    bindMode: 'transceiver',
    windowSize: 10,
    maxSubmitsPerSecond: 0,
    sourceTon: undefined,
    sourceNpi: undefined,
    countryCode: undefined,
    enquireLinkMs: 30_000,
    submitTimeoutMs: 2000,
    answerWaitMs: 2000,
    reconnectMinMs: 10,
    reconnectMaxMs: 50,
    submitIds: 'hex',
    receiptIds: 'hex',
    errorThreshold: 5,
    errorCooldownMs: 1000,
    simulated: undefined,
    idPrefix: `${name}:`,
    ...overrides,
  };
}
