<?php

declare(strict_types=1);

namespace Alttext;

/**
 * The fallback for sites the service cannot reach: every hour (WP-Cron event `alttext_pull`) asks the
 * service about a bounded batch of pending suggestions and applies those decided meanwhile.
 */
final class Pull
{
    public const HOOK = 'alttext_pull';
    public const BATCH = 50;

    /** @return array{checked: int, applied: int} */
    public static function run(): array
    {
        Webhook::pruneSeen(time());
        $result = ['checked' => 0, 'applied' => 0];
        if (!Settings::isConfigured()) {
            return $result;
        }
        $client = Client::fromSettings();
        $ids = get_posts([
            'post_type' => 'attachment',
            'post_status' => 'inherit',
            'fields' => 'ids',
            'posts_per_page' => self::BATCH,
            'orderby' => 'ID',
            'order' => 'ASC',
            'meta_key' => Meta::STATE,
            'meta_value' => 'pending',
        ]);
        foreach ($ids as $attachmentId) {
            $suggestionId = (string) get_post_meta((int) $attachmentId, Meta::SUGGESTION_ID, true);
            if ($suggestionId === '') {
                continue;
            }
            try {
                $suggestion = $client->suggestion($suggestionId);
            } catch (ServiceError $error) {
                if ($error->kind === 'not_found') {
                    State::set((int) $attachmentId, 'failed', __('The suggestion is gone from the alttext service (its organisation or the suggestion was deleted). Generate a new one.', 'alttext'));
                    continue;
                }
                // The service is down or refuses the key: the next hour tries again.
                break;
            }
            $result['checked']++;
            $status = (string) ($suggestion['status'] ?? 'pending');
            if ($status !== 'pending' && Decisions::apply($suggestion, $status, (string) ($suggestion['decided_at'] ?? '')) !== null) {
                $result['applied']++;
            }
        }
        update_option(Settings::LAST_PULL, time(), false);
        return $result;
    }
}
