import { html, type Html } from './html.js';

export interface Bar {
  label: string;
  value: number;
  /** Drawn in the warning colour: errors, failed deliveries, orders past their SLA. */
  bad?: boolean;
}

const BAR_HEIGHT = 22;
const LABEL_WIDTH = 170;
const PLOT_WIDTH = 420;

/**
 * A horizontal bar chart drawn on the page as SVG (no script, no chart service), and the same figures as a table for
 * who does not see the picture: the SVG is hidden from assistive technology, the table is not.
 */
export function barChart(title: string, bars: readonly Bar[], unit: string): Html {
  const max = Math.max(1, ...bars.map((bar) => bar.value));
  const height = bars.length * (BAR_HEIGHT + 6) + 6;
  const rows = bars.map((bar, i) => {
    const y = 6 + i * (BAR_HEIGHT + 6);
    const width = Math.round((bar.value / max) * PLOT_WIDTH);
    return html`<text x="${LABEL_WIDTH - 8}" y="${y + 15}" text-anchor="end">${bar.label}</text><rect class="bar${bar.bad ? ' bad' : ''}" x="${LABEL_WIDTH}" y="${y}" width="${width}" height="${BAR_HEIGHT}"></rect><text x="${LABEL_WIDTH + width + 6}" y="${y + 15}">${bar.value}</text>`;
  });
  return html`<figure class="chart"><figcaption>${title}</figcaption>
<svg aria-hidden="true" focusable="false" viewBox="0 0 ${LABEL_WIDTH + PLOT_WIDTH + 60} ${height}" width="${LABEL_WIDTH + PLOT_WIDTH + 60}" height="${height}"><line class="axis" x1="${LABEL_WIDTH}" y1="0" x2="${LABEL_WIDTH}" y2="${height}"></line>${rows}</svg>
<table class="visually-hidden"><caption>${title}</caption><thead><tr><th scope="col">${'Item'}</th><th scope="col" class="number">${unit}</th></tr></thead><tbody>${bars.map(
    (bar) => html`<tr><td>${bar.label}</td><td class="number">${bar.value}</td></tr>`,
  )}</tbody></table></figure>`;
}
