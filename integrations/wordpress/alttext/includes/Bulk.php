<?php

declare(strict_types=1);

namespace Alttext;

/**
 * Every image without alt text, in the background: WP-Cron (or Action Scheduler when present) runs
 * chunks of it. The cursor (the last attachment id done) is saved after each image, and the image in
 * flight before it is sent, so a PHP killed mid-run resumes where it stopped: an image whose suggestion
 * the service made but whose answer was lost is found again in the service, not sent twice. Each chunk
 * first schedules the one after it, so a run whose PHP died is picked up again by WP-Cron.
 */
final class Bulk
{
    public const HOOK = 'alttext_bulk_run';
    public const CHUNK_SECONDS = 20;
    public const CHUNK_IMAGES = 25;
    /** Service-wide failures: the run stops rather than mark every image failed. */
    private const STOPPING = ['unreachable', 'unauthorized', 'forbidden', 'not_configured', 'rate_limited', 'server'];

    public static function progress(): array
    {
        $bulk = get_option(Settings::BULK, []);
        $bulk = is_array($bulk) ? $bulk : [];
        return array_merge([
            'state' => 'idle',
            'cursor' => 0,
            'done' => 0,
            'failed' => 0,
            'total' => 0,
            'started_at' => null,
            'message' => '',
            'inflight' => null,
        ], $bulk);
    }

    /** Progress with the estimate: images still without alt text, one credit each, and what is left. */
    public static function estimate(): array
    {
        $progress = self::progress();
        $remaining = self::countCandidates();
        $credits = null;
        if (Settings::isConfigured()) {
            try {
                $usage = Client::fromSettings()->usage();
                $credits = isset($usage['credits']['remaining']) ? (int) $usage['credits']['remaining'] : null;
            } catch (ServiceError $error) {
                $credits = null;
            }
        }
        unset($progress['inflight']);
        return array_merge($progress, [
            'remaining_images' => $remaining,
            'estimate_credits' => $remaining,
            'credits_remaining' => $credits,
        ]);
    }

    /** Starts a run over every image without alt text; reads /api/usage first. */
    public static function start(): array|\WP_Error
    {
        try {
            $usage = Client::fromSettings()->usage();
        } catch (ServiceError $error) {
            return new \WP_Error('alttext_service_' . $error->kind, $error->getMessage(), ['status' => $error->kind === 'not_configured' ? 400 : 502]);
        }
        $credits = (int) ($usage['credits']['remaining'] ?? 0);
        $total = self::countCandidates();
        $bulk = [
            'state' => 'running',
            'cursor' => 0,
            'done' => 0,
            'failed' => 0,
            'total' => $total,
            'started_at' => gmdate('c'),
            'message' => '',
            'inflight' => null,
        ];
        if ($credits <= 0 && $total > 0) {
            $bulk['state'] = 'paused_quota';
            $bulk['message'] = __('No credits are left this month: nothing was sent.', 'alttext');
        } elseif ($credits < $total) {
            $bulk['message'] = sprintf(
                /* translators: 1: credits left, 2: images to describe */
                __('%1$d credits are left for %2$d images: the run stops cleanly when they are used up.', 'alttext'),
                $credits,
                $total
            );
        }
        self::save($bulk);
        if ($bulk['state'] === 'running') {
            self::schedule();
        }
        return self::estimate();
    }

    public static function cancel(): array
    {
        $bulk = self::progress();
        if ($bulk['state'] === 'running') {
            $bulk['state'] = 'cancelled';
            $bulk['message'] = __('Cancelled. Images already sent keep their suggestions.', 'alttext');
            self::save($bulk);
        }
        self::unschedule();
        return self::estimate();
    }

    /** The next chunk, as soon as WP-Cron (or Action Scheduler) runs. */
    public static function schedule(): void
    {
        self::scheduleAt(time());
    }

    private static function scheduleAt(int $timestamp): void
    {
        self::unschedule();
        if (function_exists('as_schedule_single_action')) {
            as_schedule_single_action($timestamp, self::HOOK, [], 'alttext');
            return;
        }
        wp_schedule_single_event($timestamp, self::HOOK);
    }

    private static function unschedule(): void
    {
        wp_clear_scheduled_hook(self::HOOK);
        if (function_exists('as_unschedule_all_actions')) {
            as_unschedule_all_actions(self::HOOK);
        }
    }

    /** Seconds one chunk may take; ALTTEXT_BULK_CHUNK_SECONDS in wp-config.php for a short max_execution_time. */
    public static function chunkSeconds(): int
    {
        return defined('ALTTEXT_BULK_CHUNK_SECONDS') ? max(1, (int) ALTTEXT_BULK_CHUNK_SECONDS) : self::CHUNK_SECONDS;
    }

    /** One chunk (the cron event's work); schedules the next while images are left. */
    public static function run(): array
    {
        $bulk = self::progress();
        if ($bulk['state'] !== 'running') {
            return $bulk;
        }
        $deadline = time() + self::chunkSeconds();
        // WP-Cron drops an event before running it: were PHP to die in this chunk, nothing would run the
        // next. This one does, once the chunk's time and WP-Cron's lock (held by the dead request) are over.
        $lockSeconds = defined('WP_CRON_LOCK_TIMEOUT') ? (int) WP_CRON_LOCK_TIMEOUT : 60;
        self::scheduleAt($deadline + $lockSeconds);
        $sent = 0;
        if ($bulk['inflight'] !== null) {
            $bulk = self::recover($bulk);
        }
        while (true) {
            $next = self::nextCandidate((int) $bulk['cursor']);
            if ($next === null) {
                $bulk['state'] = 'done';
                $bulk['message'] = sprintf(
                    /* translators: 1: images described, 2: images that failed */
                    __('Done: %1$d images sent, %2$d could not be described.', 'alttext'),
                    $bulk['done'],
                    $bulk['failed']
                );
                self::save($bulk);
                self::unschedule();
                return $bulk;
            }
            if ($sent >= self::CHUNK_IMAGES || time() >= $deadline) {
                self::schedule();
                return $bulk;
            }
            $bulk['inflight'] = $next;
            self::save($bulk);
            try {
                $state = Generator::send($next);
            } catch (ServiceError $error) {
                $bulk['inflight'] = null;
                if ($error->kind === 'quota') {
                    $bulk['state'] = 'paused_quota';
                    $bulk['message'] = __('Stopped: the credits of this month are used up. Start again when they renew; the images done so far are kept.', 'alttext');
                    self::save($bulk);
                    self::unschedule();
                    return $bulk;
                }
                if (in_array($error->kind, self::STOPPING, true)) {
                    $bulk['state'] = 'cancelled';
                    /* translators: %s: the reason in plain words */
                    $bulk['message'] = sprintf(__('Stopped: %s Start again to carry on.', 'alttext'), $error->getMessage());
                    self::save($bulk);
                    self::unschedule();
                    return $bulk;
                }
                State::set($next, $error->kind === 'too_large' ? 'too_large' : 'failed', $error->getMessage());
                $state = State::state($next);
            }
            $sent++;
            $bulk[in_array($state, ['failed', 'too_large'], true) ? 'failed' : 'done']++;
            $bulk['cursor'] = $next;
            $bulk['inflight'] = null;
            self::save($bulk);
        }
    }

    /** The image in flight when PHP stopped: recorded already, made in the service, or to send again. */
    private static function recover(array $bulk): array
    {
        $attachmentId = (int) $bulk['inflight'];
        $bulk['inflight'] = null;
        $state = State::state($attachmentId);
        if ($state !== '' && $state !== 'failed') {
            $bulk['cursor'] = $attachmentId;
            $bulk[in_array($state, ['too_large'], true) ? 'failed' : 'done']++;
            self::save($bulk);
            return $bulk;
        }
        if (Settings::mode() === 'suggest') {
            try {
                $listed = Client::fromSettings()->mySuggestions();
                foreach ((array) ($listed['suggestions'] ?? []) as $suggestion) {
                    $target = (array) ($suggestion['target'] ?? []);
                    if ((string) ($target['ref'] ?? '') === (string) $attachmentId && untrailingslashit((string) ($target['site'] ?? '')) === untrailingslashit(home_url())) {
                        Generator::adopt($attachmentId, $suggestion, (string) ($suggestion['current_alt'] ?? ''));
                        $bulk['cursor'] = $attachmentId;
                        $bulk['done']++;
                        break;
                    }
                }
            } catch (ServiceError $error) {
                // Not found out: the image is sent again (the service's cache makes a repeat free).
            }
        }
        self::save($bulk);
        return $bulk;
    }

    public static function countCandidates(): int
    {
        global $wpdb;
        return (int) $wpdb->get_var(self::candidateSql('COUNT(*)', 0, ''));
    }

    private static function nextCandidate(int $after): ?int
    {
        global $wpdb;
        $id = $wpdb->get_var(self::candidateSql('p.ID', $after, 'ORDER BY p.ID ASC LIMIT 1'));
        return $id === null ? null : (int) $id;
    }

    /** Images without alt text that have no suggestion or decision yet (or whose last try failed). */
    private static function candidateSql(string $select, int $after, string $tail): string
    {
        global $wpdb;
        return $wpdb->prepare(
            "SELECT {$select} FROM {$wpdb->posts} p
            LEFT JOIN {$wpdb->postmeta} a ON a.post_id = p.ID AND a.meta_key = %s
            LEFT JOIN {$wpdb->postmeta} s ON s.post_id = p.ID AND s.meta_key = %s
            WHERE p.post_type = 'attachment' AND p.post_status = 'inherit' AND p.post_mime_type LIKE %s
            AND p.ID > %d AND (a.meta_value IS NULL OR a.meta_value = '') AND (s.meta_value IS NULL OR s.meta_value = 'failed')
            {$tail}",
            Meta::ALT,
            Meta::STATE,
            'image/%',
            $after
        );
    }

    private static function save(array $bulk): void
    {
        update_option(Settings::BULK, $bulk, false);
    }
}
