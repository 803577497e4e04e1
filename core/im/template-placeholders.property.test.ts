import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fillTemplate, placeholdersOf, unfillableProblem } from './template-placeholders';

/** Text without braces: what stands between placeholders. */
const literal = fc.string({ unit: 'grapheme', maxLength: 12 }).map((s) => s.replace(/[{}]/g, ''));
const name = fc.stringMatching(/^[A-Za-z0-9_-][A-Za-z0-9 _-]{0,10}[A-Za-z0-9_-]$|^[A-Za-z0-9_-]$/);

describe('Intelligent Messaging template placeholders', () => {
  it('fills every placeholder a parameter names with its value, whatever the text around it and in it', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(literal, name, fc.string({ unit: 'grapheme', maxLength: 12 })), { maxLength: 6 }), literal, (pieces, tail) => {
        const values = new Map(pieces.map(([, n, v]) => [n, v]));
        const body = pieces.map(([text, n]) => `${text}{{ ${n} }}`).join('') + tail;
        const expected = pieces.map(([text, n]) => `${text}${values.get(n)}`).join('') + tail;
        expect(placeholdersOf(body).unfillable).toEqual([]);
        expect(new Set(placeholdersOf(body).names)).toEqual(new Set(values.keys()));
        expect(fillTemplate(body, values)).toBe(expected);
      }),
    );
  });

  it('names a placeholder no parameter can fill (a macron, a CJK name, an empty one) and fills none of it', () => {
    const body = 'Kia ora {{ingoa}}, tō ōta {{ōta}} — {{注文}} {{}}';
    const found = placeholdersOf(body);
    expect(found).toEqual({ names: ['ingoa'], unfillable: ['{{ōta}}', '{{注文}}', '{{}}'] });
    expect(unfillableProblem(found)).toMatch(/^template placeholders \{\{ōta\}\}, \{\{注文\}\}, \{\{\}\} cannot be filled/);
    expect(fillTemplate(body, new Map([['ingoa', 'Mere']]))).toBe('Kia ora Mere, tō ōta {{ōta}} — {{注文}} {{}}');
  });
});
