<?php

declare(strict_types=1);

namespace Alttext\Admin;

/**
 * The media library's alt-text UI: the list view's "Alt text" column, the suggestion field of the
 * attachment details modal and the edit-attachment screen (attachment_fields_to_edit), the data the
 * grid's badge reads (wp_prepare_attachment_for_js), the block editor's image sidebar, and the
 * notices. PHP renders a plain summary in each place; media.js makes it interactive, so the one
 * renderer in JS also serves the answers of the REST routes.
 */
final class Media
{
    public const COLUMN = 'alttext';

    public static function register(): void
    {
        add_filter('manage_media_columns', [self::class, 'addColumn']);
        add_action('manage_media_custom_column', [self::class, 'renderColumn'], 10, 2);
        add_filter('attachment_fields_to_edit', [self::class, 'addAttachmentField'], 10, 2);
        add_filter('wp_prepare_attachment_for_js', [self::class, 'addGridData'], 10, 2);
        add_action('admin_enqueue_scripts', [self::class, 'enqueue']);
        add_action('wp_enqueue_media', [self::class, 'enqueueGrid']);
        add_action('enqueue_block_editor_assets', [self::class, 'enqueueBlockEditor']);
        Notices::register();
    }

    /**
     * @param array<string, string> $columns
     * @return array<string, string>
     */
    public static function addColumn(array $columns): array
    {
        $columns[self::COLUMN] = __('Alt text', 'alttext');
        return $columns;
    }

    public static function renderColumn(string $column, int $attachmentId): void
    {
        if ($column !== self::COLUMN || !wp_attachment_is_image($attachmentId)) {
            return;
        }
        // summary() escapes everything it returns.
        echo self::summary($attachmentId, 'list');
    }

    /**
     * @param array<string, mixed> $fields
     * @return array<string, mixed>
     */
    public static function addAttachmentField(array $fields, \WP_Post $post): array
    {
        if (!wp_attachment_is_image($post->ID)) {
            return $fields;
        }
        self::enqueueMediaScript();
        $fields['alttext_suggestion'] = [
            'label' => __('Alt text suggestion', 'alttext'),
            'input' => 'html',
            'html' => self::summary($post->ID, 'details'),
            'show_in_edit' => true,
            'show_in_modal' => true,
        ];
        return $fields;
    }

    /**
     * @param array<string, mixed> $response
     * @return array<string, mixed>
     */
    public static function addGridData(array $response, \WP_Post $attachment): array
    {
        if (wp_attachment_is_image($attachment->ID)) {
            $response['alttext'] = AttachmentState::of($attachment->ID);
        }
        return $response;
    }

    public static function enqueue(string $hook): void
    {
        $screen = function_exists('get_current_screen') ? get_current_screen() : null;
        $isAttachmentEdit = $hook === 'post.php' && $screen !== null && $screen->post_type === 'attachment';
        if ($hook === 'upload.php' || $isAttachmentEdit) {
            self::enqueueMediaScript();
        }
    }

    /** The media modal, wherever it opens (the grid, the block editor): the grid's badge and the modal's field. */
    public static function enqueueGrid(): void
    {
        self::enqueueMediaScript();
        Plugin::enqueueScript('alttext-media-grid', 'media-grid.js', ['media-views', 'alttext-media']);
    }

    public static function enqueueBlockEditor(): void
    {
        Plugin::enqueueStyle();
        Plugin::enqueueScript('alttext-block-editor', 'block-editor.js', [
            'wp-hooks', 'wp-compose', 'wp-element', 'wp-block-editor', 'wp-components',
            'wp-api-fetch', 'wp-i18n', 'wp-a11y',
        ]);
        wp_add_inline_script('alttext-block-editor', self::labelsScript(), 'before');
    }

    private static function enqueueMediaScript(): void
    {
        if (wp_script_is('alttext-media', 'enqueued')) {
            return;
        }
        Plugin::enqueueStyle();
        Plugin::enqueueScript('alttext-media', 'media.js', ['wp-api-fetch', 'wp-i18n', 'wp-a11y']);
        wp_add_inline_script('alttext-media', self::labelsScript(), 'before');
    }

    /** The state labels for the scripts: one list of words, PHP's, in both. */
    private static function labelsScript(): string
    {
        $labels = [];
        $states = ['none', 'pending', 'accepted', 'edited', 'rejected', 'stale', 'filled', 'failed', 'too_large'];
        foreach ($states as $state) {
            $labels[$state] = AttachmentState::label($state);
        }
        return 'window.alttextStateLabels = ' . wp_json_encode($labels) . ';';
    }

    /**
     * The state in plain words (readable without JavaScript), in a container that carries the state
     * JSON for media.js, which replaces it with the buttons.
     */
    public static function summary(int $attachmentId, string $context): string
    {
        $state = AttachmentState::of($attachmentId);
        $html = sprintf(
            '<div class="alttext-suggestion" data-alttext-context="%s" data-alttext-state="%s">',
            esc_attr($context),
            esc_attr((string) wp_json_encode($state))
        );
        if ($context === 'list') {
            $html .= '<p class="alttext-current">' . ($state['alt'] === ''
                ? esc_html__('No alt text yet.', 'alttext')
                : esc_html__('Alt text:', 'alttext') . ' ' . esc_html($state['alt'])) . '</p>';
        }
        $html .= '<p class="alttext-state">' . esc_html(AttachmentState::label($state['state'])) . '</p>';
        if ($state['state'] === 'pending' && $state['proposed_alt'] !== null) {
            $html .= '<p class="alttext-proposed">' . esc_html__('Proposed:', 'alttext') . ' '
                . esc_html($state['proposed_alt']) . '</p>';
        }
        if ($state['error'] !== null && in_array($state['state'], AttachmentState::NOTICE_STATES, true)) {
            $html .= '<p class="alttext-error">' . esc_html($state['error']) . '</p>';
        }
        return $html . '</div>';
    }
}
