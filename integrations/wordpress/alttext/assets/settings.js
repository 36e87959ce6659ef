/**
 * Settings → Alt text: the "Test the connection" button. It asks the plugin's REST route, which asks
 * the service's /ready and /api/validate-key with the saved settings, and shows each check's answer in
 * plain words in a status region.
 */
/* global wp */
(function () {
  'use strict';

  const { __ } = wp.i18n;

  function line(ok, text) {
    const item = document.createElement('li');
    item.className = ok ? 'alttext-check-ok' : 'alttext-check-failed';
    const mark = document.createElement('strong');
    mark.textContent = ok ? __('OK:', 'alttext') : __('Problem:', 'alttext');
    item.append(mark, ' ', text);
    return item;
  }

  function show(result, ok, summary, checks) {
    const heading = document.createElement('p');
    heading.className = ok ? 'alttext-test-ok' : 'alttext-test-failed';
    heading.textContent = summary;
    const list = document.createElement('ul');
    for (const check of checks) list.append(line(check.ok, check.message));
    result.replaceChildren(heading, ...(checks.length > 0 ? [list] : []));
  }

  async function test(buttonElement, result) {
    buttonElement.disabled = true;
    result.replaceChildren(__('Testing the connection…', 'alttext'));
    try {
      const answer = await wp.apiFetch({ path: '/alttext/v1/test-connection', method: 'POST' });
      const checks = Array.isArray(answer.checks) ? answer.checks : [];
      show(
        result,
        Boolean(answer.ok),
        answer.ok ? __('The connection works.', 'alttext') : __('The connection does not work yet:', 'alttext'),
        checks,
      );
    } catch (error) {
      const message = error && error.message ? error.message : __('WordPress did not answer. Check your connection and try again.', 'alttext');
      show(result, false, __('The test could not run:', 'alttext'), [{ ok: false, message }]);
    } finally {
      buttonElement.disabled = false;
    }
  }

  function start() {
    const buttonElement = document.getElementById('alttext-test-connection');
    const result = document.getElementById('alttext-test-result');
    if (buttonElement && result) buttonElement.addEventListener('click', () => test(buttonElement, result));
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
