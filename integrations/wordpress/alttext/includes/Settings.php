<?php

declare(strict_types=1);

namespace Alttext;

/**
 * The plugin's options (names fixed by the contract) with their getters and sanitizers. The settings
 * page (Admin\SettingsPage) renders them in the group "alttext".
 */
final class Settings
{
    public const GROUP = 'alttext';
    public const SERVICE_URL = 'alttext_service_url';
    public const API_KEY = 'alttext_api_key';
    public const MODE = 'alttext_mode';
    public const WEBHOOK_SECRET = 'alttext_webhook_secret';
    public const BULK = 'alttext_bulk';
    public const LAST_PULL = 'alttext_last_pull';
    public const NOTICES = 'alttext_notices';

    public const MODES = ['suggest', 'fill-empty'];

    /** Every option the plugin stores (uninstall.php removes them). */
    public const OPTIONS = [
        self::SERVICE_URL,
        self::API_KEY,
        self::MODE,
        self::WEBHOOK_SECRET,
        self::BULK,
        self::LAST_PULL,
        self::NOTICES,
    ];

    public static function register(): void
    {
        register_setting(self::GROUP, self::SERVICE_URL, [
            'type' => 'string',
            'default' => '',
            'sanitize_callback' => [self::class, 'sanitizeServiceUrl'],
            'show_in_rest' => false,
        ]);
        register_setting(self::GROUP, self::API_KEY, [
            'type' => 'string',
            'default' => '',
            'sanitize_callback' => [self::class, 'sanitizeApiKey'],
            'show_in_rest' => false,
        ]);
        register_setting(self::GROUP, self::MODE, [
            'type' => 'string',
            'default' => 'suggest',
            'sanitize_callback' => [self::class, 'sanitizeMode'],
            'show_in_rest' => false,
        ]);
        register_setting(self::GROUP, self::WEBHOOK_SECRET, [
            'type' => 'string',
            'default' => '',
            'sanitize_callback' => [self::class, 'sanitizeWebhookSecret'],
            'show_in_rest' => false,
        ]);
    }

    /** The service's base URL without a trailing slash ('' when not set). */
    public static function serviceUrl(): string
    {
        return rtrim(trim((string) get_option(self::SERVICE_URL, '')), '/');
    }

    /** The API key: the constant ALTTEXT_API_KEY in wp-config.php wins over the option. */
    public static function apiKey(): string
    {
        if (self::apiKeyFromConstant()) {
            return trim((string) constant('ALTTEXT_API_KEY'));
        }
        return trim((string) get_option(self::API_KEY, ''));
    }

    public static function apiKeyFromConstant(): bool
    {
        return defined('ALTTEXT_API_KEY') && trim((string) constant('ALTTEXT_API_KEY')) !== '';
    }

    /** 'constant' | 'option' | 'none': what the settings page may say about the key (never the key). */
    public static function apiKeySource(): string
    {
        if (self::apiKeyFromConstant()) {
            return 'constant';
        }
        return trim((string) get_option(self::API_KEY, '')) !== '' ? 'option' : 'none';
    }

    public static function mode(): string
    {
        $mode = (string) get_option(self::MODE, 'suggest');
        return in_array($mode, self::MODES, true) ? $mode : 'suggest';
    }

    public static function webhookSecret(): string
    {
        return trim((string) get_option(self::WEBHOOK_SECRET, ''));
    }

    public static function isConfigured(): bool
    {
        return self::serviceUrl() !== '' && self::apiKey() !== '';
    }

    /** The REST address the organisation webhook is set to (the service sends to https only). */
    public static function webhookUrl(): string
    {
        return rest_url('alttext/v1/webhook');
    }

    public static function sanitizeServiceUrl($value): string
    {
        $url = esc_url_raw(trim((string) $value), ['http', 'https']);
        return rtrim($url, '/');
    }

    /** An empty field keeps the stored key: the page never shows it, so empty means "unchanged". */
    public static function sanitizeApiKey($value): string
    {
        $key = trim(sanitize_text_field((string) $value));
        if ($key === '') {
            return (string) get_option(self::API_KEY, '');
        }
        return $key;
    }

    public static function sanitizeMode($value): string
    {
        return in_array($value, self::MODES, true) ? (string) $value : 'suggest';
    }

    /** As the API key: an empty field keeps the stored secret. */
    public static function sanitizeWebhookSecret($value): string
    {
        $secret = trim(sanitize_text_field((string) $value));
        if ($secret === '') {
            return (string) get_option(self::WEBHOOK_SECRET, '');
        }
        return $secret;
    }
}
