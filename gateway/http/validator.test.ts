import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { GATEWAY_V1_SCHEMAS } from '../gateway-v1/schemas';
import { IM_SCHEMAS } from '../intelligent-messaging/schemas';
import { SMS_V2_SCHEMAS } from '../sms-v2/schemas';
import { createValidator } from './validator';

describe("each interface's request schemas", () => {
  it.each([
    ['SMS Gateway v2', SMS_V2_SCHEMAS],
    ['Gateway v1', GATEWAY_V1_SCHEMAS],
    ['Intelligent Messaging', IM_SCHEMAS],
  ])('are valid JSON Schema 2020-12 on %s (a gateway does not check them again as it starts)', (_name, components) => {
    const ajv = new Ajv2020({ strict: false });
    const valid = ajv.validateSchema({ $id: 'components', $defs: components });
    expect(ajv.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
  });

  it('are told apart from a broken one: a type JSON Schema does not have is found', () => {
    const ajv = new Ajv2020({ strict: false });
    expect(ajv.validateSchema({ $id: 'components', $defs: { ...SMS_V2_SCHEMAS, Broken: { type: 'text' } } })).toBe(false);
  });
});

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

describe('an empty text field', () => {
  it.each([
    ['SMS Gateway v2', () => createValidator(SMS_V2_SCHEMAS)('SingleMessage', { destination: '+6421800001', content: '' })],
    ['Gateway v1', () => createValidator(GATEWAY_V1_SCHEMAS)('Message', { destination: '+6421800001', content: '' })],
  ])('is told once that it must not be empty on %s, not also that it is blank', (_name, validate) => {
    expect(validate).toThrow(/^content: must not be empty$/);
  });

  it('is still told it is blank when it holds only spaces and a zero-width joiner', () => {
    expect(() => createValidator(SMS_V2_SCHEMAS)('SingleMessage', { destination: '+6421800001', content: '  \u200d ' })).toThrow(
      /^content: must not be blank: it holds only spaces, line breaks or invisible characters$/,
    );
  });
});
