<?php

declare(strict_types=1);

namespace Alttext;

/**
 * The receiver of the organisation's `suggestion.decided` webhook (POST /wp-json/alttext/v1/webhook).
 * The signature is the authentication: `Alttext-Signature: t=<unix time>,v1=<hex HMAC-SHA256 of
 * "t.body" with the whsec_ secret>`, within 5 minutes of now; a signature seen before is a replay and is
 * refused. Deliveries are at least once: a retry comes with a new signature and is applied again,
 * which changes nothing.
 */
final class Webhook
{
    public const TOLERANCE_SECONDS = 300;
    /** Signatures are kept a little longer than they can be valid. */
    public const SEEN_PREFIX = 'alttext_seen_';

    public static function handle(\WP_REST_Request $request): \WP_REST_Response
    {
        $secret = Settings::webhookSecret();
        if ($secret === '') {
            return self::refuse(503, 'alttext_no_secret', 'The webhook secret is not set in Settings → Alt text.');
        }
        $raw = (string) $request->get_body();
        $header = (string) $request->get_header('alttext_signature');
        if (!self::verify($raw, $header, $secret, time())) {
            return self::refuse(401, 'alttext_bad_signature', 'The signature is missing, wrong or too old.');
        }
        // add_option writes only a name not yet taken, in one statement: two copies of a request racing each
        // other cannot both pass.
        if (!add_option(self::SEEN_PREFIX . hash('sha256', $header), (string) time(), '', false)) {
            return self::refuse(409, 'alttext_replayed', 'This signature was received before.');
        }
        $event = json_decode($raw, true);
        if (!is_array($event) || ($event['event'] ?? '') !== 'suggestion.decided' || !is_array($event['suggestion'] ?? null)) {
            return new \WP_REST_Response(['ok' => true, 'applied' => false], 200);
        }
        $decision = (string) ($event['decision'] ?? ($event['suggestion']['status'] ?? ''));
        $applied = Decisions::apply($event['suggestion'], $decision, (string) ($event['decided_at'] ?? ''));
        return new \WP_REST_Response(['ok' => true, 'applied' => $applied !== null], 200);
    }

    /** The check docs/webhooks.md tells receivers to make; any of several v1 values may match. */
    public static function verify(string $raw, string $header, string $secret, int $now): bool
    {
        if ($header === '' || $secret === '') {
            return false;
        }
        $timestamp = null;
        $signatures = [];
        foreach (explode(',', $header) as $part) {
            $pair = explode('=', trim($part), 2);
            if (count($pair) !== 2) {
                continue;
            }
            if ($pair[0] === 't' && ctype_digit($pair[1])) {
                $timestamp = (int) $pair[1];
            } elseif ($pair[0] === 'v1') {
                $signatures[] = strtolower($pair[1]);
            }
        }
        if ($timestamp === null || abs($now - $timestamp) > self::TOLERANCE_SECONDS) {
            return false;
        }
        $expected = hash_hmac('sha256', $timestamp . '.' . $raw, $secret);
        foreach ($signatures as $signature) {
            if (hash_equals($expected, $signature)) {
                return true;
            }
        }
        return false;
    }

    /** Forgets signatures too old to be accepted anyway (run by the hourly pull). */
    public static function pruneSeen(int $now): void
    {
        global $wpdb;
        $wpdb->query($wpdb->prepare(
            "DELETE FROM {$wpdb->options} WHERE option_name LIKE %s AND (option_value + 0) < %d",
            $wpdb->esc_like(self::SEEN_PREFIX) . '%',
            $now - 2 * self::TOLERANCE_SECONDS
        ));
    }

    private static function refuse(int $status, string $code, string $message): \WP_REST_Response
    {
        return new \WP_REST_Response(['code' => $code, 'message' => $message, 'data' => ['status' => $status]], $status);
    }
}
