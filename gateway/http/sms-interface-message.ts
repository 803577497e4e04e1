import { HermodError } from '../../lib/errors';
import type { MessageDetails } from '../../proto/gen/hermod/v1/messages';
import { isImAttemptId } from '../../core/domain/im-attempt-id';

/**
 * A message as the SMS interfaces (SMS Gateway v2, Gateway v1) read it back.
 * An Intelligent Messaging message is not one of theirs: its stored content
 * is its request (destination, attempts), and it is followed by its status
 * callback, its attempts being messages of their own. Asked for by its id,
 * or by the id of one of its attempts (an attempt on SMS is stored like an
 * SMS), it is not found here, as another application's message is not.
 */
export function smsInterfaceMessage(m: MessageDetails, asked: string): MessageDetails {
  if (m.channel === 'im' || isImAttemptId(m.id)) {
    throw new HermodError('not_found', `message ${asked} not found: it is an Intelligent Messaging message, followed by its status callback`);
  }
  return m;
}
