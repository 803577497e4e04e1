import { CommandStatus } from './command-status';

/**
 * A PDU that cannot be encoded or decoded. `status` is the command_status a
 * peer should get back (e.g. in a generic_nack); `sequenceNumber` is the one
 * of the offending PDU when known.
 */
export class PduError extends Error {
  readonly status: number;
  readonly sequenceNumber: number;
  readonly commandId: number;

  constructor(status: number, message: string, header: { commandId?: number; sequenceNumber?: number } = {}) {
    super(message);
    this.name = 'PduError';
    this.status = status || CommandStatus.ESME_RUNKNOWNERR;
    this.commandId = header.commandId ?? 0;
    this.sequenceNumber = header.sequenceNumber ?? 0;
  }
}
