// The HTML report's filter: by outcome (needs work, good, decorative, not checked) and by text. Reading
// the report needs no script: every row is in the page, and the outcome radios filter through CSS
// `:has()` alone. A small inline script adds the text filter and a count of the rows shown.
import { OUTCOME_TEXT, OUTCOMES, type Outcome } from './outcome'

/** The CSS that hides rows, pages and groups of other outcomes while an outcome's radio is checked. */
export function filterCss(): string {
  const rules = OUTCOMES.map((outcome) => {
    const checked = `main:has(#show-${outcome}:checked)`
    return [
      `${checked} tr[data-o]:not([data-o="${outcome}"]) { display: none; }`,
      `${checked} .page:not([data-o="${outcome}"]):not(:has(tr[data-o="${outcome}"])) { display: none; }`,
      `${checked} .group:not(:has([data-o="${outcome}"])) { display: none; }`,
    ].join('\n')
  })
  return [
    '.filters { border: 1px solid var(--line); border-radius: 6px; padding: .5rem 1rem; margin: 1rem 0; background: var(--soft); }',
    '.filters fieldset { border: 0; margin: 0; padding: 0; display: flex; flex-wrap: wrap; gap: .25rem 1rem; align-items: center; }',
    '.filters legend { font-weight: 600; padding: 0; margin-bottom: .25rem; }',
    '.filters label { cursor: pointer; }',
    '.filters input[type="search"] { font: inherit; padding: .25rem .5rem; border: 1px solid var(--muted); border-radius: 4px; min-width: 16rem; }',
    '.filters input:focus-visible { outline: 2px solid #0a58ca; outline-offset: 2px; }',
    '[hidden] { display: none !important; }',
    ...rules,
  ].join('\n')
}

/** The filter controls: one radio per outcome present (and All), and the text field the script shows. */
export function filterControls(counts: Record<Outcome, number>): string {
  const shown = OUTCOMES.filter((outcome) => counts[outcome] > 0)
  const radio = (value: string, label: string, checked: boolean) =>
    `<label><input type="radio" name="show" id="show-${value}" value="${value}"${checked ? ' checked' : ''}> ${label}</label>`
  const radios = [radio('all', 'All', true), ...shown.map((outcome) => radio(outcome, `${OUTCOME_TEXT[outcome]} (${counts[outcome]})`, false))]
  return [
    '<form class="filters" role="search" aria-label="Filter the images" onsubmit="return false">',
    `<fieldset><legend>Show images</legend>${radios.join('')}</fieldset>`,
    '<p id="text-filter" hidden><label for="filter-text">Filter by text (page, address or alt text): </label><input type="search" id="filter-text" autocomplete="off"></p>',
    '<p id="filter-count" role="status"></p>',
    '</form>',
  ].join('')
}

/**
 * The script: rows match the outcome chosen and the text typed; a page without a matching row and a
 * group without a matching page are hidden; the status line says how many rows are shown.
 */
export const FILTER_SCRIPT = `<script>
(() => {
  const form = document.querySelector('.filters');
  if (!form) return;
  const field = document.getElementById('filter-text');
  const count = document.getElementById('filter-count');
  document.getElementById('text-filter').hidden = false;
  const rows = [...document.querySelectorAll('tr[data-o]')];
  const texts = new Map(rows.map((row) => [row, (row.closest('.page').dataset.name + ' ' + row.textContent).toLowerCase()]));
  const apply = () => {
    const outcome = form.querySelector('input[name="show"]:checked').value;
    const words = field.value.trim().toLowerCase();
    let shown = 0;
    for (const row of rows) {
      const match = (outcome === 'all' || row.dataset.o === outcome) && (words === '' || texts.get(row).includes(words));
      row.hidden = !match;
      if (match) shown++;
    }
    for (const page of document.querySelectorAll('.page')) {
      const own = page.dataset.o !== undefined && (outcome === 'all' || page.dataset.o === outcome) && (words === '' || page.textContent.toLowerCase().includes(words));
      page.hidden = !own && !page.querySelector('tr[data-o]:not([hidden])');
    }
    for (const group of document.querySelectorAll('.group')) group.hidden = !group.querySelector('.page:not([hidden])');
    count.textContent = outcome === 'all' && words === '' ? '' : shown + ' of ' + rows.length + ' images shown';
  };
  form.addEventListener('input', apply);
  form.addEventListener('change', apply);
  apply();
})();
</script>`
