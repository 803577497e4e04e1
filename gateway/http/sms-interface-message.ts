import { HermodError } from '../../lib/errors';
import type { MessageDetails } from '../../proto/gen/hermod/v1/messages';

/**
 * A message as the SMS interfaces (SMS Gateway v2, Gateway v1) read it back.
 * An Intelligent Messaging message is not one of theirs: its stored content
 * is its request (destination, attempts), and it is followed by its status
 * callback, its attempts being messages of their own. Asked for by its id,
 * it is not found here, as another application's message is not.
 */
export function smsInterfaceMessage(m: MessageDetails, asked: string): MessageDetails {
  if (m.channel === 'im') {
    throw new HermodError('not_found', `message ${asked} not found: it is an Intelligent Messaging message, followed by its status callback`);
  }
  return m;
}
