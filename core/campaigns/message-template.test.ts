import { describe, expect, it } from 'vitest';
import { HermodError } from '../../lib/errors';
import { compileContent } from './message-template';

describe('campaign content placeholders', () => {
  it('fill in each member’s parameters and destination', () => {
    const render = compileContent('Hi {{param1}}, your code is {{ param2 }} for {{destination}}.');
    expect(render({ destination: '+6421000001', params: ['Ana', '4711'] })).toBe('Hi Ana, your code is 4711 for +6421000001.');
  });

  it('render a parameter the member does not have as nothing', () => {
    expect(compileContent('Hi {{param6}}!')({ destination: '+1', params: ['a'] })).toBe('Hi !');
  });

  it('leave content without placeholders as it is', () => {
    expect(compileContent('50% off today {not a placeholder}')({ destination: '+1', params: [] })).toBe('50% off today {not a placeholder}');
  });

  it('refuse unknown placeholders when the campaign is scheduled', () => {
    expect(() => compileContent('Hi {{name}} {{param7}}')).toThrow(HermodError);
    expect(() => compileContent('Hi {{name}}')).toThrow(/\{\{name\}\}/);
  });
});
