import type { MessageStatus } from '../../core/domain/message-status';
import type { ReceiptState } from '../carriers/smpp/smpp-client';

/** What each receipt state means for the message. `accepted` (en route) is not a change. */
export const STATUS_BY_RECEIPT: Record<ReceiptState, MessageStatus | undefined> = {
  delivered: 'received',
  undeliverable: 'failed',
  expired: 'expired',
  rejected: 'rejected',
  deleted: 'dead',
  unknown: 'failed',
  accepted: undefined,
};
