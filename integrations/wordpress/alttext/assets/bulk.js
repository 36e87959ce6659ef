/**
 * Media → Alt text: the bulk run's figures, Start / Cancel and the progress. Reads GET
 * /wp-json/alttext/v1/bulk, and polls it while the run is going (each request also lets WP-Cron run
 * the next chunk). The progress is said in words in a status region, only when it changes.
 */
/* global wp */
(function () {
  'use strict';

  const { __, _n, sprintf } = wp.i18n;
  const POLL_MS = 2000;
  let timer = null;
  let lastStatus = '';

  const $ = (id) => document.getElementById(id);

  function number(value) {
    return typeof value === 'number' ? value.toLocaleString() : '—';
  }

  function statusText(bulk) {
    const done = bulk.done || 0;
    const failed = bulk.failed || 0;
    const total = bulk.total || 0;
    switch (bulk.state) {
      case 'running':
        return sprintf(
          /* translators: 1: images done, 2: images in the run, 3: images that could not be described */
          __('Running: %1$d of %2$d images done, %3$d could not be described.', 'alttext'),
          done + failed,
          total,
          failed,
        );
      case 'done':
        return sprintf(
          /* translators: 1: images described, 2: images that could not be described */
          __('Finished: %1$d images described, %2$d could not be described.', 'alttext'),
          done,
          failed,
        );
      case 'cancelled':
        return sprintf(
          /* translators: 1: images done, 2: images in the run */
          __('Cancelled after %1$d of %2$d images. Start again to go on where it stopped.', 'alttext'),
          done + failed,
          total,
        );
      case 'paused_quota':
        return sprintf(
          /* translators: 1: images done, 2: images in the run */
          __('Stopped at the quota after %1$d of %2$d images.', 'alttext'),
          done + failed,
          total,
        );
      default:
        return __('Not started.', 'alttext');
    }
  }

  function errorText(bulk) {
    if (bulk.state === 'paused_quota') {
      const words = __(
        'The organisation has no credits left for now, so the run stopped. The images done so far keep their alt text; start again when there are credits, and it goes on where it stopped.',
        'alttext',
      );
      return bulk.message ? `${words} ${bulk.message}` : words;
    }
    if (bulk.state === 'running' || bulk.state === 'done' || bulk.state === 'idle') return bulk.failed > 0 && bulk.message ? bulk.message : '';
    return bulk.message || '';
  }

  function show(bulk) {
    $('alttext-bulk-remaining').textContent = number(bulk.remaining_images);
    $('alttext-bulk-estimate').textContent = number(bulk.estimate_credits);
    $('alttext-bulk-credits').textContent = bulk.credits_remaining === null ? __('No limit', 'alttext') : number(bulk.credits_remaining);
    const running = bulk.state === 'running';
    $('alttext-bulk-start').disabled = running || !(bulk.remaining_images > 0);
    $('alttext-bulk-cancel').disabled = !running;
    const progress = $('alttext-bulk-progress');
    const total = bulk.total || 0;
    progress.max = total > 0 ? total : 100;
    progress.value = total > 0 ? Math.min(total, (bulk.done || 0) + (bulk.failed || 0)) : 0;
    let status = statusText(bulk);
    if (!running && typeof bulk.estimate_credits === 'number' && typeof bulk.credits_remaining === 'number' && bulk.estimate_credits > bulk.credits_remaining) {
      status += ` ${sprintf(
        /* translators: %d: credits left */
        _n(
          'There is %d credit left, fewer than the estimate: the run will stop when it is used, and can go on later.',
          'There are %d credits left, fewer than the estimate: the run will stop when they are used, and can go on later.',
          bulk.credits_remaining,
          'alttext',
        ),
        bulk.credits_remaining,
      )}`
    }
    if (status !== lastStatus) {
      $('alttext-bulk-status').textContent = status;
      lastStatus = status;
    }
    const error = errorText(bulk);
    if ($('alttext-bulk-error').textContent !== error) $('alttext-bulk-error').textContent = error;
    clearTimeout(timer);
    if (running) timer = setTimeout(load, POLL_MS);
  }

  function fail(error) {
    const message = error && error.message ? error.message : __('WordPress did not answer. Check your connection and try again.', 'alttext');
    $('alttext-bulk-error').textContent = message;
  }

  async function load() {
    try {
      show(await wp.apiFetch({ path: '/alttext/v1/bulk' }));
    } catch (error) {
      fail(error);
      // A missed poll is not the end of the run: try again.
      clearTimeout(timer);
      timer = setTimeout(load, POLL_MS * 2);
    }
  }

  async function send(action, buttonElement) {
    buttonElement.disabled = true;
    try {
      show(await wp.apiFetch({ path: '/alttext/v1/bulk', method: 'POST', data: { action } }));
      // The pressed button is now disabled: focus goes to the one that can be pressed next.
      const next = action === 'start' ? $('alttext-bulk-cancel') : $('alttext-bulk-start');
      if (next.disabled) $('alttext-bulk-status').focus();
      else next.focus();
    } catch (error) {
      buttonElement.disabled = false;
      fail(error);
    }
  }

  function start() {
    if (!$('alttext-bulk-app')) return;
    $('alttext-bulk-start').addEventListener('click', (event) => send('start', event.currentTarget));
    $('alttext-bulk-cancel').addEventListener('click', (event) => send('cancel', event.currentTarget));
    load();
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
