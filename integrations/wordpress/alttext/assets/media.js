/**
 * The alt-text suggestion in the media library: the list view's column, the attachment details modal
 * and the edit-attachment screen. PHP prints each place's state in plain words inside a
 * .alttext-suggestion element carrying the state JSON; this script replaces it with the state, the
 * proposed text and the Accept / Edit / Reject buttons, and renders the REST routes' answers the same
 * way. Plain ES2017 on WordPress's globals: no build step.
 */
/* global wp */
(function () {
  'use strict';

  const { __, sprintf } = wp.i18n;
  const labels = window.alttextStateLabels || {};
  const NOTICE_STATES = ['failed', 'too_large', 'stale'];
  let uid = 0;

  function el(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      if (value === false || value === null || value === undefined) continue;
      if (name === 'className') node.className = value;
      else if (name === 'text') node.textContent = value;
      else node.setAttribute(name, value === true ? '' : value);
    }
    for (const child of children) if (child) node.append(child);
    return node;
  }

  function button(text, className, extra) {
    return el('button', Object.assign({ type: 'button', className: `button ${className}`, text }, extra || {}));
  }

  /** apiFetch's error (a WP_Error's message when the route answered), in words. */
  function errorMessage(error) {
    if (error && typeof error.message === 'string' && error.message !== '') return error.message;
    return __('WordPress did not answer. Check your connection and try again.', 'alttext');
  }

  function call(path, data) {
    return wp.apiFetch({ path: `/alttext/v1/${path}`, method: 'POST', data: data || {} });
  }

  /** The state a place shows: the media model's when an action here has updated it since PHP printed the page. */
  function initialState(container) {
    const printed = JSON.parse(container.getAttribute('data-alttext-state') || '{}');
    const media = window.wp && wp.media && wp.media.attachment;
    if (media && printed.attachment_id) {
      const known = wp.media.attachment(printed.attachment_id).get('alttext');
      if (known && known.state) return known;
    }
    return printed;
  }

  function setUp(container) {
    if (container.hasAttribute('data-alttext-ready')) return;
    container.setAttribute('data-alttext-ready', '');
    const body = el('div', { className: 'alttext-body' });
    // Kept across renders, so that what an action did is read out even though the buttons change.
    const result = el('p', { className: 'alttext-result', role: 'status', 'aria-live': 'polite' });
    container.replaceChildren(body, result);
    render(container, initialState(container));
  }

  function render(container, state) {
    const body = container.querySelector('.alttext-body');
    const context = container.getAttribute('data-alttext-context');
    const id = `alttext-${context}-${state.attachment_id}-${++uid}`;
    container.setAttribute('data-alttext-state', JSON.stringify(state));
    container.setAttribute('data-state', state.state);
    const parts = [];
    if (context === 'list') {
      parts.push(
        el('p', { className: 'alttext-current', text: state.alt ? `${__('Alt text:', 'alttext')} ${state.alt}` : __('No alt text yet.', 'alttext') }),
      );
    }
    parts.push(el('p', { className: 'alttext-state', id: `${id}-state`, tabindex: '-1', text: labels[state.state] || state.state }));
    if (state.state === 'pending' && state.proposed_alt) {
      parts.push(
        el(
          'p',
          { className: 'alttext-proposed' },
          el('span', { className: 'alttext-proposed-label', text: `${__('Proposed:', 'alttext')} ` }),
          el('span', { className: 'alttext-proposed-text', id: `${id}-proposed`, text: state.proposed_alt }),
        ),
      );
    }
    if (state.error && NOTICE_STATES.includes(state.state)) parts.push(el('p', { className: 'alttext-error', text: state.error }));

    if (state.state === 'pending' && state.proposed_alt && state.can_decide) {
      const described = { 'aria-describedby': `${id}-proposed` };
      const editor = el(
        'div',
        { className: 'alttext-editor', hidden: true },
        el('label', { for: `${id}-text`, text: __('Alt text to accept', 'alttext') }),
        el('textarea', { id: `${id}-text`, className: 'alttext-edit-text', rows: '3' }),
        el(
          'p',
          {},
          button(__('Save and accept', 'alttext'), 'button-primary alttext-save'),
          ' ',
          button(__('Cancel', 'alttext'), 'alttext-cancel'),
        ),
      );
      parts.push(
        el(
          'p',
          { className: 'alttext-actions' },
          button(__('Accept', 'alttext'), 'button-primary alttext-accept', described),
          ' ',
          button(__('Edit', 'alttext'), 'alttext-edit', Object.assign({ 'aria-expanded': 'false', 'aria-controls': `${id}-editor` }, described)),
          ' ',
          button(__('Reject', 'alttext'), 'alttext-reject', described),
        ),
      );
      editor.id = `${id}-editor`;
      parts.push(editor);
    } else if (['none', 'failed', 'rejected'].includes(state.state)) {
      parts.push(
        el(
          'p',
          { className: 'alttext-actions' },
          button(state.state === 'failed' ? __('Try again', 'alttext') : __('Suggest alt text', 'alttext'), 'alttext-generate'),
        ),
      );
    }
    body.replaceChildren(...parts);
  }

  /** Brings the rest of the page in line with a new state: the alt text fields, the media model, the grid's badge. */
  function propagate(container, state) {
    const scope = container.closest('.attachment-details, .media-modal, form#post') || document;
    if (state.state === 'accepted' || state.state === 'edited' || state.state === 'filled') {
      for (const field of scope.querySelectorAll('[data-setting="alt"] textarea, [data-setting="alt"] input, #attachment_alt')) {
        field.value = state.alt;
      }
    }
    if (window.wp && wp.media && wp.media.attachment) {
      wp.media.attachment(state.attachment_id).set({ alt: state.alt, alttext: state });
    }
    document.dispatchEvent(new CustomEvent('alttext:state', { detail: state }));
  }

  function announce(container, text, isError) {
    const result = container.querySelector('.alttext-result');
    result.classList.toggle('alttext-result-error', Boolean(isError));
    result.textContent = text;
  }

  function outcome(state) {
    switch (state.state) {
      case 'accepted':
      case 'edited':
        return sprintf(__('Accepted. The alt text is now: %s', 'alttext'), state.alt);
      case 'rejected':
        return __('Rejected. The alt text was not changed.', 'alttext');
      case 'pending':
        return __('A suggestion is ready for review.', 'alttext');
      default:
        return labels[state.state] || state.state;
    }
  }

  async function act(container, request, busyButton) {
    const state = JSON.parse(container.getAttribute('data-alttext-state'));
    for (const b of container.querySelectorAll('button')) b.disabled = true;
    if (busyButton) busyButton.setAttribute('aria-busy', 'true');
    announce(container, __('Working…', 'alttext'));
    try {
      const next = await request(state.attachment_id);
      render(container, next);
      propagate(container, next);
      announce(container, outcome(next));
      // The buttons are gone: focus goes to the new state, not to the page's top.
      const target = container.querySelector('.alttext-actions button') || container.querySelector('.alttext-state');
      target.focus();
    } catch (error) {
      for (const b of container.querySelectorAll('button')) b.disabled = false;
      if (busyButton) busyButton.removeAttribute('aria-busy');
      announce(container, errorMessage(error), true);
    }
  }

  function onClick(event) {
    const target = event.target.closest('button');
    const container = target && target.closest('.alttext-suggestion[data-alttext-ready]');
    if (!container) return;
    event.preventDefault();
    const editor = container.querySelector('.alttext-editor');
    const editButton = container.querySelector('.alttext-edit');
    if (target.classList.contains('alttext-accept')) {
      act(container, (id) => call(`attachments/${id}/accept`), target);
    } else if (target.classList.contains('alttext-reject')) {
      act(container, (id) => call(`attachments/${id}/reject`), target);
    } else if (target.classList.contains('alttext-generate')) {
      act(container, (id) => call('generate', { attachment_id: id }), target);
    } else if (target.classList.contains('alttext-edit')) {
      const state = JSON.parse(container.getAttribute('data-alttext-state'));
      const text = editor.querySelector('textarea');
      text.value = state.proposed_alt || '';
      editor.hidden = false;
      editButton.setAttribute('aria-expanded', 'true');
      text.focus();
    } else if (target.classList.contains('alttext-cancel')) {
      editor.hidden = true;
      editButton.setAttribute('aria-expanded', 'false');
      editButton.focus();
    } else if (target.classList.contains('alttext-save')) {
      const text = editor.querySelector('textarea');
      const altText = text.value.trim();
      if (altText === '') {
        text.setAttribute('aria-invalid', 'true');
        announce(container, __('Enter the alt text, or reject the suggestion.', 'alttext'), true);
        text.focus();
        return;
      }
      act(container, (id) => call(`attachments/${id}/accept`, { alt_text: altText }), target);
    }
  }

  // The modal's compat fields are rendered by Backbone after the page loads: they are set up as they appear.
  function setUpAll(root) {
    for (const container of (root || document).querySelectorAll('.alttext-suggestion:not([data-alttext-ready])')) setUp(container);
  }

  function start() {
    setUpAll(document);
    document.addEventListener('click', onClick);
    new MutationObserver(() => setUpAll(document)).observe(document.body, { childList: true, subtree: true });
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
