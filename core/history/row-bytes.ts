import type { MessageRecord, StatusEvent } from '../ports/message-history';
import { stageOf } from '../domain/message-status';
import { jsonKey, type JsonRowWriter } from './json-row-writer';

/**
 * The rows of rows.ts (`messageRow`, `eventRow`) written straight into a
 * JsonRowWriter: the same keys in the same order, the same bytes as
 * `JSON.stringify` of those objects (a property test holds them to it).
 */

const M = {
  id: jsonKey('id'),
  numId: jsonKey('num_id'),
  applicationId: jsonKey('application_id'),
  channel: jsonKey('channel'),
  direction: jsonKey('direction'),
  destination: jsonKey('destination'),
  source: jsonKey('source'),
  content: jsonKey('content'),
  reference: jsonKey('reference'),
  messageClass: jsonKey('message_class'),
  mask: jsonKey('mask'),
  smsClass: jsonKey('sms_class'),
  scheduledAt: jsonKey('scheduled_at'),
  integrationId: jsonKey('integration_id'),
  via: jsonKey('via'),
  segments: jsonKey('segments'),
  acceptedAt: jsonKey('accepted_at'),
  replyTo: jsonKey('reply_to'),
  replyRoute: jsonKey('reply_route'),
};

const E = {
  messageId: jsonKey('message_id'),
  applicationId: jsonKey('application_id'),
  status: jsonKey('status'),
  stage: jsonKey('stage'),
  at: jsonKey('at'),
  detail: jsonKey('detail'),
  carrierId: jsonKey('carrier_id'),
  errorCode: jsonKey('error_code'),
};

export function writeMessageRow(w: JsonRowWriter, m: MessageRecord): void {
  w.beginObject();
  w.field(M.id, m.id);
  w.field(M.numId, m.numericId);
  w.repeatedField(M.applicationId, m.applicationId);
  w.repeatedField(M.channel, m.channel);
  w.repeatedField(M.direction, m.direction);
  w.field(M.destination, m.destination);
  w.repeatedField(M.source, m.source);
  w.field(M.content, m.content);
  w.field(M.reference, m.reference);
  w.field(M.messageClass, m.messageClass);
  w.field(M.mask, m.mask);
  w.field(M.smsClass, m.smsClass);
  w.timeField(M.scheduledAt, m.scheduledAt);
  w.field(M.integrationId, m.integrationId);
  w.repeatedField(M.via, m.via);
  w.field(M.segments, m.segments);
  w.timeField(M.acceptedAt, m.acceptedAt);
  w.field(M.replyTo, m.replyTo);
  w.field(M.replyRoute, m.replyRoute ?? '');
  w.endObject();
}

export function writeEventRow(w: JsonRowWriter, e: StatusEvent): void {
  w.beginObject();
  w.field(E.messageId, e.messageId);
  w.repeatedField(E.applicationId, e.applicationId);
  w.repeatedField(E.status, e.status);
  w.field(E.stage, stageOf(e.status));
  w.timeField(E.at, e.at);
  w.field(E.detail, e.detail);
  w.field(E.carrierId, e.carrierId);
  w.field(E.errorCode, e.errorCode);
  w.endObject();
}
