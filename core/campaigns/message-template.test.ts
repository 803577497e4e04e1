import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HermodError } from '../../lib/errors';
import { compileContent, validateContent } from './message-template';

describe('campaign content placeholders', () => {
  it('fill in each member’s parameters and destination', () => {
    const render = compileContent('Kia ora {{param1}}, tō waehere {{ param2 }} mō {{destination}} — 你好 👋🏽');
    expect(render({ destination: '+6421000001', params: ['Ānaru', 'Привет-4711 🎉'] })).toBe(
      'Kia ora Ānaru, tō waehere Привет-4711 🎉 mō +6421000001 — 你好 👋🏽',
    );
  });

  it('render a parameter the member does not have as nothing', () => {
    expect(compileContent('Tēnā koe {{param6}}!')({ destination: '+1', params: ['a'] })).toBe('Tēnā koe !');
  });

  it('leave content without placeholders as it is', () => {
    expect(compileContent('50% off today {not a placeholder} — 五折 {{ 🎉')({ destination: '+1', params: [] })).toBe(
      '50% off today {not a placeholder} — 五折 {{ 🎉',
    );
  });

  it('put a member’s parameter in as it is, even one that looks like a placeholder', () => {
    expect(compileContent('{{param1}}{{param2}}')({ destination: '+1', params: ['{{param2}}', '你好'] })).toBe('{{param2}}你好');
  });

  it('refuse unknown placeholders when the campaign is scheduled', () => {
    expect(() => compileContent('Kia ora {{name}} {{param7}}')).toThrow(HermodError);
    expect(() => compileContent('Привет {{name}}')).toThrow(/\{\{name\}\}/);
    expect(() => compileContent('你好 {{名字}}')).toThrow(/\{\{名字\}\}/);
  });

  it('render any world text around placeholders unchanged, with each parameter where its placeholder was', () => {
    const text = fc.string({ unit: 'grapheme' }).filter((s) => !s.includes('{') && !s.includes('}'));
    const param = fc.string({ unit: 'grapheme', maxLength: 50 });
    fc.assert(
      fc.property(
        fc.array(fc.tuple(text, fc.integer({ min: 0, max: 6 })), { maxLength: 6 }),
        text,
        fc.array(param, { maxLength: 6 }),
        (parts, tail, params) => {
          const destination = '+6421000001';
          const content = parts.map(([t, slot]) => `${t}{{${slot === 0 ? 'destination' : `param${slot}`}}}`).join('') + tail;
          const expected = parts.map(([t, slot]) => t + (slot === 0 ? destination : (params[slot - 1] ?? ''))).join('') + tail;
          expect(compileContent(content)({ destination, params })).toBe(expected);
        },
      ),
    );
  });
});

describe('campaign content length', () => {
  it('takes 1,600 characters counted as code points (an emoji is one) and refuses 1,601', () => {
    expect(() => validateContent('👋🏽'.repeat(800))).not.toThrow();
    expect(() => validateContent('mā'.repeat(800))).not.toThrow();
    expect(() => validateContent(`${'你好'.repeat(800)}!`)).toThrow(/must NOT have more than 1600 characters \(it has 1601\)/);
  });

  it('still refuses unknown placeholders in content of any length', () => {
    expect(() => validateContent('Kia ora {{ingoa}}')).toThrow(/\{\{ingoa\}\}/);
  });
});
