/**
 * The media grid's badge: a thumbnail whose image has a suggestion waiting for review shows a small
 * "Suggestion" mark, and its accessible name says so. A small extension of wp.media.view.Attachment
 * (every thumbnail view inherits it), reading the `alttext` state that wp_prepare_attachment_for_js
 * adds to each attachment.
 */
/* global wp */
(function () {
  'use strict';

  const { __, sprintf } = wp.i18n;
  const Attachment = wp.media && wp.media.view && wp.media.view.Attachment;
  if (!Attachment) return;

  function decorate(view) {
    const state = view.model.get('alttext');
    const old = view.el.querySelector('.alttext-badge');
    if (old) old.remove();
    const title = view.model.get('title') || '';
    if (!state || state.state !== 'pending') {
      if (view.el.hasAttribute('aria-label')) view.el.setAttribute('aria-label', title);
      return;
    }
    const preview = view.el.querySelector('.attachment-preview') || view.el;
    const badge = document.createElement('span');
    badge.className = 'alttext-badge';
    // The thumbnail's aria-label carries the same words for screen readers; the mark is for the eye.
    badge.setAttribute('aria-hidden', 'true');
    badge.textContent = __('Suggestion', 'alttext');
    preview.append(badge);
    /* translators: %s: the image's title */
    view.el.setAttribute('aria-label', sprintf(__('%s, alt text suggestion waiting for review', 'alttext'), title));
  }

  const initialize = Attachment.prototype.initialize;
  const render = Attachment.prototype.render;
  Attachment.prototype.initialize = function (...args) {
    const out = initialize.apply(this, args);
    this.listenTo(this.model, 'change:alttext', () => decorate(this));
    return out;
  };
  Attachment.prototype.render = function (...args) {
    const out = render.apply(this, args);
    decorate(this);
    return out;
  };
})();
