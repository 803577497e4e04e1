import { describe, expect, it } from 'vitest';
import { GATEWAY_V1_SCHEMAS } from '../gateway-v1/schemas';
import { SMS_V2_SCHEMAS } from '../sms-v2/schemas';
import { createValidator } from './validator';

describe('a request whose field fails its pattern', () => {
  it.each([
    ['SMS Gateway v2', () => createValidator(SMS_V2_SCHEMAS)('SingleMessage', { destination: '006421800001', content: 'Kia ora 👋🏽' })],
    ['SMS Gateway v2, with spaces', () => createValidator(SMS_V2_SCHEMAS)('SingleMessage', { destination: '+64 21 800 001', content: 'Kia ora' })],
    ['Gateway v1', () => createValidator(GATEWAY_V1_SCHEMAS)('Message', { destination: '0064218000 01', content: '你好' })],
  ])('is told in words what the destination must be on %s, not as a regular expression', (_name, validate) => {
    try {
      validate();
      expect.unreachable('validated');
    } catch (err) {
      const message = (err as Error).message;
      expect(message).toMatch(/^destination: is not a mobile number in E\.164 form/);
      expect(message).not.toMatch(/pattern|\^|\$/);
    }
  });
});
