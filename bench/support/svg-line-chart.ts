/** One line of a panel: its name and its points (x, y); NaN values leave a gap. */
export interface Series {
  name: string;
  points: readonly (readonly [number, number])[];
}

/** One chart of a figure: a title, the y axis' unit, its lines, and optional vertical markers (x, label). */
export interface Panel {
  title: string;
  unit: string;
  series: readonly Series[];
  markers?: readonly (readonly [number, string])[];
}

const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];
const WIDTH = 960;
const PANEL_HEIGHT = 260;
const PAD = { left: 70, right: 220, top: 30, bottom: 40 };

const xmlText = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Rounds a range's upper end to a readable tick step: 1, 2 or 5 × 10ⁿ. */
function niceStep(range: number, ticks: number): number {
  if (!(range > 0)) return 1;
  const raw = range / ticks;
  const mag = 10 ** Math.floor(Math.log10(raw));
  return ([1, 2, 5, 10].find((m) => m * mag >= raw) ?? 10) * mag;
}

const label = (v: number): string => (Math.abs(v) >= 100 || Number.isInteger(v) ? String(Math.round(v)) : v.toPrecision(3));

/** A figure of line charts stacked one above the other, sharing the x axis' meaning (`xUnit`); returns the SVG text. */
export function svgLineChart(title: string, xUnit: string, panels: readonly Panel[]): string {
  const height = 40 + panels.length * PANEL_HEIGHT;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${WIDTH / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${xmlText(title)}</text>`,
  ];
  panels.forEach((panel, p) => {
    const top = 40 + p * PANEL_HEIGHT;
    const x0 = PAD.left;
    const x1 = WIDTH - PAD.right;
    const y0 = top + PANEL_HEIGHT - PAD.bottom;
    const y1 = top + PAD.top;
    const all = panel.series.flatMap((s) => s.points).filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
    const xMax = Math.max(1e-9, ...all.map(([x]) => x));
    const yStep = niceStep(Math.max(0, ...all.map(([, y]) => y)), 5);
    const yMax = Math.max(yStep, Math.ceil(Math.max(0, ...all.map(([, y]) => y)) / yStep) * yStep);
    const xStep = niceStep(xMax, 10);
    const sx = (x: number): number => x0 + (x / xMax) * (x1 - x0);
    const sy = (y: number): number => y0 - (y / yMax) * (y0 - y1);
    out.push(`<text x="${x0}" y="${top + 18}" font-weight="bold">${xmlText(panel.title)} (${xmlText(panel.unit)})</text>`);
    for (let y = 0; y <= yMax + 1e-9; y += yStep) {
      out.push(`<line x1="${x0}" x2="${x1}" y1="${sy(y)}" y2="${sy(y)}" stroke="#ddd"/>`);
      out.push(`<text x="${x0 - 6}" y="${sy(y) + 4}" text-anchor="end">${label(y)}</text>`);
    }
    for (let x = 0; x <= xMax + 1e-9; x += xStep) out.push(`<text x="${sx(x)}" y="${y0 + 16}" text-anchor="middle">${label(x)}</text>`);
    out.push(`<text x="${(x0 + x1) / 2}" y="${y0 + 32}" text-anchor="middle">${xmlText(xUnit)}</text>`);
    out.push(`<line x1="${x0}" x2="${x1}" y1="${y0}" y2="${y0}" stroke="#333"/><line x1="${x0}" x2="${x0}" y1="${y0}" y2="${y1}" stroke="#333"/>`);
    for (const [x, text] of panel.markers ?? []) {
      out.push(`<line x1="${sx(x)}" x2="${sx(x)}" y1="${y0}" y2="${y1}" stroke="#999" stroke-dasharray="4 3"/>`);
      out.push(`<text x="${sx(x) + 3}" y="${y1 + 10}" fill="#666">${xmlText(text)}</text>`);
    }
    panel.series.forEach((s, i) => {
      const colour = COLOURS[i % COLOURS.length]!;
      // A NaN starts a new stretch of the line.
      let d = '';
      let pen = 'M';
      for (const [x, y] of s.points) {
        if (!Number.isFinite(x) || !Number.isFinite(y)) {
          pen = 'M';
          continue;
        }
        d += `${pen}${sx(x).toFixed(1)},${sy(y).toFixed(1)} `;
        pen = 'L';
      }
      if (d) out.push(`<path d="${d.trim()}" fill="none" stroke="${colour}" stroke-width="1.5"/>`);
      out.push(`<rect x="${x1 + 12}" y="${y1 + i * 18}" width="12" height="3" fill="${colour}"/>`);
      out.push(`<text x="${x1 + 30}" y="${y1 + i * 18 + 5}">${xmlText(s.name)}</text>`);
    });
  });
  out.push('</svg>');
  return out.join('\n');
}
