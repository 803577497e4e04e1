/**
 * RCS Business Messaging as Google documents it, written out here from the
 * public references (placeholders such as PHONE_NUMBER filled in with
 * concrete values; nothing else changed).
 */

/**
 * Sending a text: `POST /v1/phones/{phone}/agentMessages?messageId=…&agentId=…`
 * with `Authorization: Bearer <access token>`, body `{contentMessage: {text}}`,
 * answered with the AgentMessage.
 * Source: https://developers.google.com/business-communications/rcs-business-messaging/guides/build/messages/send
 * and https://developers.google.com/business-communications/rcs-business-messaging/reference/rest/v1/phones.agentMessages/create
 */
export const SEND_TEXT = {
  path: '/v1/phones/+12223334444/agentMessages',
  body: { contentMessage: { text: 'Hello, world!' } },
  answer: {
    status: 200,
    body: { name: 'phones/+12223334444/agentMessages/MSG-1', sendTime: '2018-12-31T15:01:23.045123456Z', contentMessage: { text: 'Hello, world!' } },
  },
};

/**
 * Sending a file by URL: `contentMessage.contentInfo.fileUrl` (and `forceRefresh`).
 * Source: https://developers.google.com/business-communications/rcs-business-messaging/guides/build/messages/send#media
 */
export const SEND_FILE = {
  body: { contentMessage: { contentInfo: { fileUrl: 'https://storage.googleapis.com/kitchen-sink-sample-images/cute-dog.jpg', forceRefresh: false } } },
};

/**
 * A phone that cannot take RCS: the create call answers 404 NOT_FOUND (Google API error shape).
 * Source: https://developers.google.com/business-communications/rcs-business-messaging/guides/build/capabilities
 * and https://cloud.google.com/apis/design/errors#http_mapping
 */
export const NOT_RCS_CAPABLE = { status: 404, body: { error: { code: 404, message: 'Requested entity was not found.', status: 'NOT_FOUND' } } };

/**
 * The token endpoint's answer to a service account's JWT bearer grant.
 * Source: https://developers.google.com/identity/protocols/oauth2/service-account#httprest
 */
export const TOKEN_ANSWER = {
  status: 200,
  body: {
    access_token: '1/8xbJqaOZXSUZbHLl5EOtu1pxz3fmmetKx9W8CV4t79M',
    scope: 'https://www.googleapis.com/auth/rcsbusinessmessaging',
    token_type: 'Bearer',
    expires_in: 3600,
  },
};

/**
 * User events: DELIVERED and READ; a server event: TTL_EXPIRATION_REVOKED.
 * Source: https://developers.google.com/business-communications/rcs-business-messaging/guides/build/events
 */
export const USER_EVENT_DELIVERED = {
  senderPhoneNumber: '+12223334444',
  eventType: 'DELIVERED',
  eventId: 'EVENT-1',
  messageId: 'MSG-1',
  agentId: 'hermod-agent',
};
export const USER_EVENT_READ = { senderPhoneNumber: '+12223334444', eventType: 'READ', eventId: 'EVENT-2', messageId: 'MSG-1', agentId: 'hermod-agent' };
export const USER_EVENT_IS_TYPING = { senderPhoneNumber: '+12223334444', eventType: 'IS_TYPING', eventId: 'EVENT-3', agentId: 'hermod-agent' };
export const SERVER_EVENT_TTL_REVOKED = {
  phoneNumber: '+12223334444',
  messageId: 'MSG-1',
  agentId: 'hermod-agent',
  eventType: 'TTL_EXPIRATION_REVOKED',
  eventId: 'EVENT-4',
  sendTime: '2018-12-31T15:01:23.045123456Z',
};

/**
 * A user's text message to the agent.
 * Source: https://developers.google.com/business-communications/rcs-business-messaging/guides/build/messages/receive
 */
export const USER_MESSAGE_TEXT = {
  senderPhoneNumber: '+12223334444',
  messageId: 'USER-MSG-1',
  sendTime: '2018-12-31T15:01:23.045123456Z',
  text: 'Hello, world!',
  agentId: 'hermod-agent',
};

/**
 * How a webhook receives them: a Pub/Sub push message, `data` the base64 of the event JSON.
 * Source: https://developers.google.com/business-communications/rcs-business-messaging/guides/integrate/webhooks
 * and https://cloud.google.com/pubsub/docs/push#receive_push
 */
export function pubSubPush(event: unknown) {
  return {
    message: { data: Buffer.from(JSON.stringify(event)).toString('base64'), messageId: '2070443601311540', publishTime: '2021-02-26T19:13:55.749Z' },
    subscription: 'projects/rbm-hermod-agent/subscriptions/rbm-agent-subscription',
  };
}

/**
 * The webhook verification RBM sends when a webhook URL is configured; the
 * webhook answers 200 with the secret.
 * Source: https://developers.google.com/business-communications/rcs-business-messaging/guides/integrate/webhooks#configure_an_agent_webhook
 */
export const WEBHOOK_VERIFICATION = { clientToken: 'SJENCPGJESMGUFPY', secret: '1234567890' };
