<?php

declare(strict_types=1);

namespace Alttext\Admin;

/**
 * Admin notices for what did not happen: images alttext could not describe, images too large to send,
 * and suggestions not applied because a person changed the alt text meanwhile. Shown in the media
 * library (a count per kind with the latest reason) and on the image's own edit screen (its reason).
 */
final class Notices
{
    public static function register(): void
    {
        add_action('admin_notices', [self::class, 'render']);
    }

    public static function render(): void
    {
        if (!current_user_can('upload_files')) {
            return;
        }
        $screen = function_exists('get_current_screen') ? get_current_screen() : null;
        if ($screen === null) {
            return;
        }
        if ($screen->base === 'upload' || $screen->id === 'media_page_' . BulkPage::SLUG) {
            self::renderLibraryNotices();
        } elseif ($screen->base === 'post' && $screen->post_type === 'attachment') {
            $post = get_post();
            if ($post instanceof \WP_Post) {
                self::renderAttachmentNotice($post->ID);
            }
        }
    }

    private static function renderLibraryNotices(): void
    {
        foreach (AttachmentState::NOTICE_STATES as $state) {
            $query = new \WP_Query([
                'post_type' => 'attachment',
                'post_status' => 'inherit',
                'posts_per_page' => 1,
                'orderby' => 'modified',
                'order' => 'DESC',
                'fields' => 'ids',
                'no_found_rows' => false,
                'meta_key' => AttachmentState::META_STATE,
                'meta_value' => $state,
            ]);
            $count = (int) $query->found_posts;
            if ($count === 0) {
                continue;
            }
            $latestId = (int) ($query->posts[0] ?? 0);
            $reason = (string) get_post_meta($latestId, AttachmentState::META_ERROR, true);
            self::print(self::libraryMessage($state, $count), $reason, $state === 'stale' ? 'info' : 'warning');
        }
    }

    private static function libraryMessage(string $state, int $count): string
    {
        switch ($state) {
            case 'failed':
                $text = _n(
                    /* translators: %d: number of images */
                    'alttext could not describe %d image. The upload itself is kept; '
                    . 'try again from its alt-text field.',
                    'alttext could not describe %d images. The uploads themselves are kept; '
                    . 'try again from their alt-text fields.',
                    $count,
                    'alttext'
                );
                break;
            case 'too_large':
                $text = _n(
                    /* translators: %d: number of images */
                    '%d image is too large to send to alttext, and has no smaller size to send instead.',
                    '%d images are too large to send to alttext, and have no smaller size to send instead.',
                    $count,
                    'alttext'
                );
                break;
            default:
                $text = _n(
                    /* translators: %d: number of images */
                    'A suggestion for %d image was not applied: a person changed its alt text meanwhile, '
                    . 'and their text was kept.',
                    'Suggestions for %d images were not applied: a person changed their alt text meanwhile, '
                    . 'and their text was kept.',
                    $count,
                    'alttext'
                );
        }
        return sprintf($text, $count);
    }

    private static function renderAttachmentNotice(int $attachmentId): void
    {
        $state = (string) get_post_meta($attachmentId, AttachmentState::META_STATE, true);
        if (!in_array($state, AttachmentState::NOTICE_STATES, true)) {
            return;
        }
        $reason = (string) get_post_meta($attachmentId, AttachmentState::META_ERROR, true);
        self::print(AttachmentState::label($state) . '.', $reason, $state === 'stale' ? 'info' : 'warning');
    }

    private static function print(string $message, string $reason, string $type): void
    {
        echo '<div class="notice notice-' . esc_attr($type) . ' is-dismissible alttext-notice"><p>'
            . esc_html($message);
        if ($reason !== '') {
            /* translators: %s: the reason, in plain words, from alttext */
            echo ' ' . esc_html(sprintf(__('Latest reason: %s', 'alttext'), $reason));
        }
        echo '</p></div>';
    }
}
