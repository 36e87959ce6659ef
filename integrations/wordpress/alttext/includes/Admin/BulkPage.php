<?php

declare(strict_types=1);

namespace Alttext\Admin;

/**
 * Media → Alt text: every image without alt text, described in the background. The page shows the
 * count, the credit estimate and the credits left before it starts, then the progress; bulk.js reads
 * and drives it through GET and POST /wp-json/alttext/v1/bulk.
 */
final class BulkPage
{
    public const SLUG = 'alttext-bulk';

    private static string $hook = '';

    public static function register(): void
    {
        add_action('admin_menu', [self::class, 'addPage']);
        add_action('admin_enqueue_scripts', [self::class, 'enqueue']);
    }

    public static function addPage(): void
    {
        $hook = add_media_page(
            __('Alt text for images without it', 'alttext'),
            __('Alt text', 'alttext'),
            'upload_files',
            self::SLUG,
            [self::class, 'render']
        );
        self::$hook = is_string($hook) ? $hook : '';
    }

    public static function enqueue(string $hook): void
    {
        if ($hook !== self::$hook || self::$hook === '') {
            return;
        }
        Plugin::enqueueStyle();
        Plugin::enqueueScript('alttext-bulk', 'bulk.js', ['wp-api-fetch', 'wp-i18n', 'wp-a11y']);
    }

    public static function render(): void
    {
        if (!current_user_can('upload_files')) {
            return;
        }
        $loading = esc_html__('Loading…', 'alttext');
        echo '<div class="wrap alttext-bulk">';
        echo '<h1>' . esc_html(get_admin_page_title()) . '</h1>';
        echo '<p>'
            . esc_html__(
                'alttext can describe every image in the media library that has no alt text. '
                . 'It runs in the background: you can leave this page, and it goes on where it stopped '
                . 'if the site is interrupted. Alt text that a person wrote is never changed.',
                'alttext'
            )
            . '</p>';
        echo '<div id="alttext-bulk-app">';
        echo '<h2>' . esc_html__('Before you start', 'alttext') . '</h2>';
        echo '<dl class="alttext-figures">';
        printf(
            '<div><dt>%s</dt><dd id="alttext-bulk-remaining">%s</dd></div>',
            esc_html__('Images without alt text', 'alttext'),
            $loading
        );
        printf(
            '<div><dt>%s</dt><dd id="alttext-bulk-estimate">%s</dd></div>',
            esc_html__('Credits this will use (one per image)', 'alttext'),
            $loading
        );
        printf(
            '<div><dt>%s</dt><dd id="alttext-bulk-credits">%s</dd></div>',
            esc_html__('Credits left this month', 'alttext'),
            $loading
        );
        echo '</dl>';
        echo '<p class="alttext-bulk-actions">';
        printf(
            '<button type="button" class="button button-primary" id="alttext-bulk-start" disabled>%s</button> ',
            esc_html__('Start', 'alttext')
        );
        printf(
            '<button type="button" class="button" id="alttext-bulk-cancel" disabled>%s</button>',
            esc_html__('Cancel', 'alttext')
        );
        echo '</p>';
        echo '<h2 id="alttext-bulk-progress-label">' . esc_html__('Progress', 'alttext') . '</h2>';
        echo '<progress id="alttext-bulk-progress" max="100" value="0" '
            . 'aria-labelledby="alttext-bulk-progress-label"></progress>';
        // The progress in words: polite, so a screen reader says it between other speech.
        echo '<p id="alttext-bulk-status" class="alttext-bulk-status" tabindex="-1" role="status" '
            . 'aria-live="polite"></p>';
        // Errors and the quota stop: an alert, read at once.
        echo '<div id="alttext-bulk-error" class="alttext-bulk-error" role="alert"></div>';
        echo '</div>';
        echo '<noscript><p>' . esc_html__('This page needs JavaScript.', 'alttext') . '</p></noscript>';
        echo '</div>';
    }
}
