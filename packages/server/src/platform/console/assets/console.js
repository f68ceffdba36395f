// The menu folds away on a narrow screen (it is open in the page, so without this script it stays open).
(() => {
  const menu = document.querySelector('details.menu');
  if (menu && window.matchMedia('(max-width: 700px)').matches) menu.removeAttribute('open');
})();
// Draws the overview's charts with uPlot from the figures the page carries as JSON. Amounts arrive as
// exact decimal strings; they become numbers here only to be drawn.
(() => {
  for (const holder of document.querySelectorAll('[data-chart]')) {
    const data = JSON.parse(document.getElementById(holder.getAttribute('data-chart')).textContent);
    const days = data.days.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000);
    const palette = ['#1a4fb8', '#b3541e', '#2e7d32', '#7b1fa2', '#c62828', '#00838f'];
    const series = [{}].concat(
      // Away from the plot the legend shows each series' total over the period, not "--".
      data.series.map((s, i) => ({
        label: s.label,
        stroke: palette[i % palette.length],
        width: 2,
        value: (_u, v) => (v == null ? `${s.total} in total` : String(v)),
      })),
    );
    const values = [days].concat(data.series.map((s) => s.values.map(Number)));
    const width = Math.max(320, Math.min(holder.clientWidth || 800, 1100) - 16);
    // eslint-disable-next-line no-undef
    new uPlot({ width: width, height: 240, series: series, axes: [{}, { size: 70 }] }, values, holder);
  }
})();
// An object's id is copied in one click (the page's "Copy" beside it); where the clipboard is refused,
// the id is selected for the person to copy.
(() => {
  for (const button of document.querySelectorAll('button.copy[data-copy]')) {
    button.addEventListener('click', async () => {
      const id = button.getAttribute('data-copy');
      try {
        await navigator.clipboard.writeText(id);
        button.textContent = 'Copied';
      } catch {
        const code = button.previousElementSibling;
        if (code) window.getSelection()?.selectAllChildren(code);
      }
    });
  }
})();
