import { describe, expect, it } from 'vitest';
import { svgLineChart } from './svg-line-chart';

describe('SVG line chart', () => {
  it('draws one path per series, names it in the legend, and escapes the text', () => {
    const svg = svgLineChart('Soak — tēnā koe 👋🏽 <embedded>', 'minutes', [
      {
        title: 'RSS',
        unit: 'MB',
        series: [
          {
            name: 'core & gateway',
            points: [
              [0, 100],
              [1, 120],
              [2, 118],
            ],
          },
          {
            name: '网关',
            points: [
              [0, 50],
              [1, Number.NaN],
              [2, 55],
            ],
          },
        ],
        markers: [[1, 'warm-up ends']],
      },
    ]);
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg.match(/<path /g)).toHaveLength(2);
    expect(svg).toContain('Soak — tēnā koe 👋🏽 &lt;embedded&gt;');
    expect(svg).toContain('core &amp; gateway');
    // The NaN splits the second line into two stretches.
    expect(/<path d="M[^"]*M[^"]*" fill="none" stroke="#d62728"/.test(svg)).toBe(true);
  });
});
