<?php

declare(strict_types=1);

namespace Alttext;

/**
 * Alt text for the media library from the command line.
 *
 * ## EXAMPLES
 *
 *     wp alttext generate 123 124
 *     wp alttext bulk
 *     wp alttext status
 */
final class Cli
{
    /**
     * Sends images to alttext now (a suggestion, or filled alt text in fill-empty mode).
     *
     * ## OPTIONS
     *
     * <attachment-id>...
     * : The attachments' ids.
     */
    public function generate(array $args, array $assoc): void
    {
        $failed = 0;
        foreach ($args as $arg) {
            $attachmentId = (int) $arg;
            $post = get_post($attachmentId);
            if (!$post instanceof \WP_Post || $post->post_type !== 'attachment' || !Images::isImage($attachmentId)) {
                \WP_CLI::warning(sprintf('%d: no such image.', $attachmentId));
                $failed++;
                continue;
            }
            try {
                $state = Generator::generate($attachmentId);
            } catch (ServiceError $error) {
                \WP_CLI::error($error->getMessage());
                return;
            }
            $line = sprintf('%d: %s', $attachmentId, $state['state']);
            if ($state['error'] !== null) {
                $line .= ' (' . $state['error'] . ')';
                $failed++;
            } elseif ($state['proposed_alt'] !== null) {
                $line .= ': ' . $state['proposed_alt'];
            }
            \WP_CLI::log($line);
        }
        if ($failed > 0) {
            \WP_CLI::error(sprintf('%d of %d images were not described.', $failed, count($args)));
            return;
        }
        \WP_CLI::success(sprintf('%d images sent.', count($args)));
    }

    /**
     * Every image without alt text, in this process, until done or the quota stops it. Resumes a run that
     * was stopped (a killed PHP, say) where it stopped.
     */
    public function bulk(array $args, array $assoc): void
    {
        $bulk = Bulk::progress();
        if ($bulk['state'] !== 'running') {
            $started = Bulk::start();
            if ($started instanceof \WP_Error) {
                \WP_CLI::error($started->get_error_message());
                return;
            }
            \WP_CLI::log(sprintf('%d images without alt text, %s credits left.', $started['remaining_images'], (string) ($started['credits_remaining'] ?? '?')));
        }
        do {
            $bulk = Bulk::run();
            \WP_CLI::log(sprintf('%d of %d done, %d failed.', $bulk['done'], $bulk['total'], $bulk['failed']));
        } while ($bulk['state'] === 'running');
        wp_clear_scheduled_hook(Bulk::HOOK);
        if ($bulk['state'] === 'done') {
            \WP_CLI::success($bulk['message']);
            return;
        }
        \WP_CLI::error($bulk['message']);
    }

    /** Settings, pending suggestions and the bulk run. */
    public function status(array $args, array $assoc): void
    {
        $status = Rest::status()->get_data();
        \WP_CLI::log(sprintf('configured: %s', $status['configured'] ? 'yes' : 'no'));
        \WP_CLI::log(sprintf('mode: %s', $status['mode']));
        \WP_CLI::log(sprintf('pending suggestions: %d', $status['pending']));
        \WP_CLI::log(sprintf('bulk: %s, %d of %d done, %d failed', $status['bulk']['state'], $status['bulk']['done'], $status['bulk']['total'], $status['bulk']['failed']));
        if ($status['bulk']['message'] !== '') {
            \WP_CLI::log($status['bulk']['message']);
        }
    }
}
