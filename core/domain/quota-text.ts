/** A quota as people say it: "1 message per hour", "12 messages per day". */
export const quotaText = (messages: number, period: string): string => `${messages} ${messages === 1 ? 'message' : 'messages'} per ${period}`;
