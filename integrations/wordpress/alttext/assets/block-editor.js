/**
 * The block editor: an "Alt text suggestion" panel in the image block's sidebar, with the attachment's
 * suggestion and Accept / Edit / Reject. Accepting writes the alt text into the attachment (through the
 * plugin's REST route, which also decides the suggestion in alttext) and into the block's `alt`.
 */
/* global wp */
(function () {
  'use strict';

  const { __, sprintf } = wp.i18n;
  const { createElement: h, Fragment, useState, useEffect } = wp.element;
  const { InspectorControls } = wp.blockEditor;
  const { PanelBody, Button, TextareaControl } = wp.components;
  const labels = window.alttextStateLabels || {};

  function errorMessage(error) {
    return error && error.message ? error.message : __('WordPress did not answer. Check your connection and try again.', 'alttext');
  }

  function SuggestionPanel({ attachmentId, setAttributes }) {
    const [state, setState] = useState(null);
    const [editing, setEditing] = useState(false);
    const [text, setText] = useState('');
    const [busy, setBusy] = useState(false);
    const [message, setMessage] = useState('');

    useEffect(() => {
      let current = true;
      setState(null);
      setEditing(false);
      setMessage('');
      wp.apiFetch({ path: `/alttext/v1/attachments/${attachmentId}` }).then(
        (answer) => current && setState(answer),
        (error) => current && setMessage(errorMessage(error)),
      );
      return () => {
        current = false;
      };
    }, [attachmentId]);

    async function decide(path, data) {
      setBusy(true);
      setMessage(__('Working…', 'alttext'));
      try {
        const next = await wp.apiFetch({ path: `/alttext/v1/attachments/${attachmentId}/${path}`, method: 'POST', data: data || {} });
        setState(next);
        setEditing(false);
        if (next.state === 'accepted' || next.state === 'edited') {
          setAttributes({ alt: next.alt });
          setMessage(sprintf(__('Accepted. The alt text is now: %s', 'alttext'), next.alt));
        } else if (next.state === 'rejected') {
          setMessage(__('Rejected. The alt text was not changed.', 'alttext'));
        } else {
          setMessage(labels[next.state] || next.state);
        }
      } catch (error) {
        setMessage(errorMessage(error));
      } finally {
        setBusy(false);
      }
    }

    const children = [];
    if (state === null) {
      if (message === '') children.push(h('p', { key: 'loading' }, __('Loading…', 'alttext')));
    } else {
      children.push(h('p', { key: 'state', className: 'alttext-state' }, labels[state.state] || state.state));
      if (state.state === 'pending' && state.proposed_alt) {
        children.push(h('p', { key: 'proposed', className: 'alttext-proposed' }, `${__('Proposed:', 'alttext')} `, h('span', { className: 'alttext-proposed-text' }, state.proposed_alt)));
        if (state.can_decide && !editing) {
          children.push(
            h(
              'div',
              { key: 'actions', className: 'alttext-actions' },
              h(Button, { variant: 'primary', disabled: busy, onClick: () => decide('accept') }, __('Accept', 'alttext')),
              ' ',
              h(
                Button,
                {
                  variant: 'secondary',
                  disabled: busy,
                  onClick: () => {
                    setText(state.proposed_alt);
                    setEditing(true);
                  },
                },
                __('Edit', 'alttext'),
              ),
              ' ',
              h(Button, { variant: 'tertiary', isDestructive: true, disabled: busy, onClick: () => decide('reject') }, __('Reject', 'alttext')),
            ),
          );
        }
        if (state.can_decide && editing) {
          children.push(
            h(
              'div',
              { key: 'editor', className: 'alttext-editor' },
              // Focus goes into the field the person asked to edit.
              h(TextareaControl, { label: __('Alt text to accept', 'alttext'), value: text, onChange: setText, autoFocus: true }),
              h(Button, { variant: 'primary', disabled: busy || text.trim() === '', onClick: () => decide('accept', { alt_text: text.trim() }) }, __('Save and accept', 'alttext')),
              ' ',
              h(Button, { variant: 'secondary', disabled: busy, onClick: () => setEditing(false) }, __('Cancel', 'alttext')),
            ),
          );
        }
      }
      if (state.error && ['failed', 'too_large', 'stale'].includes(state.state)) children.push(h('p', { key: 'error', className: 'alttext-error' }, state.error));
    }
    children.push(h('p', { key: 'result', className: 'alttext-result', role: 'status', 'aria-live': 'polite' }, message));
    return h(PanelBody, { title: __('Alt text suggestion', 'alttext'), initialOpen: true, className: 'alttext-panel' }, children);
  }

  const withSuggestion = wp.compose.createHigherOrderComponent(
    (BlockEdit) =>
      function AlttextImageEdit(props) {
        const edit = h(BlockEdit, Object.assign({ key: 'edit' }, props));
        if (props.name !== 'core/image' || !props.attributes.id || !props.isSelected) return edit;
        return h(
          Fragment,
          null,
          edit,
          h(InspectorControls, { key: 'alttext' }, h(SuggestionPanel, { attachmentId: props.attributes.id, setAttributes: props.setAttributes })),
        );
      },
    'withAlttextSuggestion',
  );

  wp.hooks.addFilter('editor.BlockEdit', 'alttext/image-suggestion', withSuggestion);
})();
