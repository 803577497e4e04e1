import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sameTypedText, typedForms } from './typed-text';

// Letters with marks typed both ways, beside any text at all.
const marked = fc.constantFrom('ō', 'ā', 'Ā', 'ē', 'ī', 'ū', 'ñ', 'é', 'ü', 'ǘ', 'Å', 'ệ', '가', 'が');
const typedText = fc.array(fc.oneof(marked, fc.string({ unit: 'grapheme', maxLength: 3 })), { maxLength: 12 }).map((parts) => parts.join(''));

describe('typed text', () => {
  it('is the same text whether its letters came precomposed or with combining marks (property)', () => {
    fc.assert(
      fc.property(typedText, (text) => {
        expect(sameTypedText(text.normalize('NFC'), text.normalize('NFD'))).toBe(true);
        expect(sameTypedText(text, text)).toBe(true);
      }),
    );
  });

  it('is looked up first as given, then in each form, each form once (property)', () => {
    fc.assert(
      fc.property(typedText, (text) => {
        const forms = typedForms(text);
        expect(forms[0]).toBe(text);
        expect(forms).toContain(text.normalize('NFC'));
        expect(forms).toContain(text.normalize('NFD'));
        expect(new Set(forms).size).toBe(forms.length);
      }),
    );
  });

  it('tells different words apart', () => {
    expect(sameTypedText('Kōrero', 'Korero')).toBe(false);
    expect(sameTypedText('kōrero', 'Kōrero')).toBe(false);
  });
});
