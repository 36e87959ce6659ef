<?php

declare(strict_types=1);

namespace Alttext;

/**
 * The plugin's REST routes, namespace alttext/v1. Capabilities: upload_files to generate and read,
 * edit_others_posts to decide, manage_options to test the connection. Cookie-authenticated calls need
 * WordPress's REST nonce (X-WP-Nonce, `wp_rest`), which WordPress itself checks before these do; the
 * webhook is public and its signature is the authentication.
 */
final class Rest
{
    public const NAMESPACE = 'alttext/v1';

    public static function register(): void
    {
        $id = ['id' => ['type' => 'integer', 'required' => true, 'minimum' => 1]];
        register_rest_route(self::NAMESPACE, '/generate', [
            'methods' => 'POST',
            'callback' => [self::class, 'generate'],
            'permission_callback' => [self::class, 'canGenerate'],
            'args' => ['attachment_id' => ['type' => 'integer', 'required' => true, 'minimum' => 1]],
        ]);
        register_rest_route(self::NAMESPACE, '/status', [
            'methods' => 'GET',
            'callback' => [self::class, 'status'],
            'permission_callback' => static fn () => current_user_can('upload_files'),
        ]);
        register_rest_route(self::NAMESPACE, '/attachments/(?P<id>\d+)', [
            'methods' => 'GET',
            'callback' => [self::class, 'attachment'],
            'permission_callback' => static fn () => current_user_can('upload_files'),
            'args' => $id,
        ]);
        register_rest_route(self::NAMESPACE, '/attachments/(?P<id>\d+)/accept', [
            'methods' => 'POST',
            'callback' => [self::class, 'accept'],
            'permission_callback' => static fn () => current_user_can('edit_others_posts'),
            'args' => $id + ['alt_text' => ['type' => 'string', 'required' => false]],
        ]);
        register_rest_route(self::NAMESPACE, '/attachments/(?P<id>\d+)/reject', [
            'methods' => 'POST',
            'callback' => [self::class, 'reject'],
            'permission_callback' => static fn () => current_user_can('edit_others_posts'),
            'args' => $id + ['reason' => ['type' => 'string', 'required' => false]],
        ]);
        register_rest_route(self::NAMESPACE, '/bulk', [
            [
                'methods' => 'GET',
                'callback' => static fn () => rest_ensure_response(Bulk::estimate()),
                'permission_callback' => static fn () => current_user_can('upload_files'),
            ],
            [
                'methods' => 'POST',
                'callback' => [self::class, 'bulk'],
                'permission_callback' => static fn () => current_user_can('upload_files'),
                'args' => ['action' => ['type' => 'string', 'required' => true, 'enum' => ['start', 'cancel']]],
            ],
        ]);
        register_rest_route(self::NAMESPACE, '/test-connection', [
            'methods' => 'POST',
            'callback' => [self::class, 'testConnection'],
            'permission_callback' => static fn () => current_user_can('manage_options'),
        ]);
        register_rest_route(self::NAMESPACE, '/webhook', [
            'methods' => 'POST',
            'callback' => [Webhook::class, 'handle'],
            'permission_callback' => '__return_true',
        ]);
    }

    public static function canGenerate(\WP_REST_Request $request): bool
    {
        return current_user_can('upload_files') && current_user_can('edit_post', (int) $request['attachment_id']);
    }

    public static function generate(\WP_REST_Request $request): \WP_REST_Response|\WP_Error
    {
        $attachmentId = (int) $request['attachment_id'];
        $missing = self::missingAttachment($attachmentId);
        if ($missing !== null) {
            return $missing;
        }
        if (!Images::isImage($attachmentId)) {
            return new \WP_Error('alttext_not_an_image', __('This attachment is not an image.', 'alttext'), ['status' => 400]);
        }
        try {
            return rest_ensure_response(Generator::generate($attachmentId));
        } catch (ServiceError $error) {
            return new \WP_Error('alttext_' . $error->kind, $error->getMessage(), ['status' => 400]);
        }
    }

    public static function status(): \WP_REST_Response
    {
        $pending = new \WP_Query([
            'post_type' => 'attachment',
            'post_status' => 'inherit',
            'fields' => 'ids',
            'posts_per_page' => 1,
            'meta_key' => Meta::STATE,
            'meta_value' => 'pending',
        ]);
        $bulk = Bulk::progress();
        unset($bulk['inflight']);
        return rest_ensure_response([
            'configured' => Settings::isConfigured(),
            'mode' => Settings::mode(),
            'bulk' => $bulk,
            'pending' => (int) $pending->found_posts,
        ]);
    }

    public static function attachment(\WP_REST_Request $request): \WP_REST_Response|\WP_Error
    {
        $attachmentId = (int) $request['id'];
        return self::missingAttachment($attachmentId) ?? rest_ensure_response(State::of($attachmentId));
    }

    public static function accept(\WP_REST_Request $request): \WP_REST_Response|\WP_Error
    {
        $text = $request['alt_text'];
        return self::decided(fn () => Decisions::accept((int) $request['id'], is_string($text) ? $text : null));
    }

    public static function reject(\WP_REST_Request $request): \WP_REST_Response|\WP_Error
    {
        $reason = $request['reason'];
        return self::decided(fn () => Decisions::reject((int) $request['id'], is_string($reason) ? $reason : ''));
    }

    public static function bulk(\WP_REST_Request $request): \WP_REST_Response|\WP_Error
    {
        $result = $request['action'] === 'start' ? Bulk::start() : Bulk::cancel();
        return $result instanceof \WP_Error ? $result : rest_ensure_response($result);
    }

    /** /ready and /api/validate-key, each said in plain words. */
    public static function testConnection(): \WP_REST_Response
    {
        $checks = [];
        $url = Settings::serviceUrl();
        if ($url === '' || Settings::apiKey() === '') {
            $checks[] = ['name' => 'settings', 'ok' => false, 'message' => __('Enter the service address and an API key first.', 'alttext')];
            return rest_ensure_response(['ok' => false, 'checks' => $checks]);
        }
        $client = new Client($url, Settings::apiKey());
        try {
            $client->ready();
            $checks[] = ['name' => 'ready', 'ok' => true, 'message' => __('The service is up and its model answers.', 'alttext')];
        } catch (ServiceError $error) {
            $message = $error->kind === 'unreachable' ? $error->getMessage() : sprintf(
                /* translators: %s: what the service said */
                __('The service answers but is not ready: %s', 'alttext'),
                $error->getMessage()
            );
            $checks[] = ['name' => 'ready', 'ok' => false, 'message' => $message];
        }
        try {
            $key = $client->validateKey();
            $checks[] = ['name' => 'key', 'ok' => true, 'message' => sprintf(
                /* translators: 1: plan name, 2: credits left */
                __('The API key is valid (plan %1$s, %2$d credits left this month).', 'alttext'),
                (string) ($key['plan'] ?? ''),
                (int) ($key['credits_remaining'] ?? 0)
            )];
        } catch (ServiceError $error) {
            $checks[] = ['name' => 'key', 'ok' => false, 'message' => $error->getMessage()];
        }
        $ok = !in_array(false, array_column($checks, 'ok'), true);
        return rest_ensure_response(['ok' => $ok, 'checks' => $checks]);
    }

    private static function decided(callable $decide): \WP_REST_Response|\WP_Error
    {
        try {
            $result = $decide();
        } catch (ServiceError $error) {
            return new \WP_Error('alttext_' . $error->kind, $error->getMessage(), ['status' => 400]);
        }
        return $result instanceof \WP_Error ? $result : rest_ensure_response($result);
    }

    private static function missingAttachment(int $attachmentId): ?\WP_Error
    {
        $post = get_post($attachmentId);
        if ($post instanceof \WP_Post && $post->post_type === 'attachment') {
            return null;
        }
        return new \WP_Error('alttext_not_found', __('No such attachment.', 'alttext'), ['status' => 404]);
    }
}
